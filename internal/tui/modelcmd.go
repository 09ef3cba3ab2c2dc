package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/price"
)

// /model with a model switches to it once it is known to exist: an alias,
// a model of brood's price table (settings' [prices] add to it) for the
// Anthropic and OpenAI APIs, any model of a local or routing provider
// (brood has no list of theirs: the syntax is checked), a script file. With
// no argument it opens a picker.

// knownModels lists the models /model offers: the aliases, then the
// Anthropic and OpenAI models of the price table.
func knownModels(prices price.Table) []string {
	var out []string
	for a := range provider.Aliases() {
		out = append(out, a)
	}
	slices.Sort(out)
	var api []string
	for _, id := range prices.Models() {
		switch {
		case strings.HasPrefix(id, "claude-"):
			api = append(api, "anthropic/"+id)
		case strings.HasPrefix(id, "gpt-") || (len(id) > 1 && id[0] == 'o' && id[1] >= '0' && id[1] <= '9'):
			api = append(api, "openai/"+id)
		}
	}
	slices.Sort(api)
	return append(out, api...)
}

// checkModel refuses a model brood does not know of, naming the ones it
// does.
func checkModel(spec string, prices price.Table) error {
	canon, err := provider.Canonical(spec)
	if err != nil {
		return err
	}
	prov, id, _ := strings.Cut(canon, "/")
	if prov != "anthropic" && prov != "openai" {
		return nil // a script, or a provider whose models brood cannot list
	}
	if _, ok := prices.Lookup(id); ok {
		return nil
	}
	return fmt.Errorf("unknown model %s: brood knows %s (/model alone picks one; a model brood does not list yet can be added under [prices] in settings.toml)",
		canon, strings.Join(knownModels(prices), ", "))
}

// canonical is spec's provider/model form (spec itself if it has none).
func canonical(spec string) string {
	if c, err := provider.Canonical(spec); err == nil && !slices.Contains(knownAliases(), spec) {
		return c
	}
	return spec
}

func knownAliases() []string {
	var out []string
	for a := range provider.Aliases() {
		out = append(out, a)
	}
	return out
}

// picker is a list to choose one item from (/model without an argument).
type picker struct {
	title string
	items []string
	cur   int
	pick  func(m *Model, item string)
}

// pickerRows is how many items the picker shows at once.
const pickerRows = 8

func (p *picker) text(current string) string {
	var b strings.Builder
	b.WriteString(p.title + "\n")
	start := max(0, min(p.cur-pickerRows/2, len(p.items)-pickerRows))
	end := min(len(p.items), start+pickerRows)
	if start > 0 {
		fmt.Fprintf(&b, "  ↑ %d more\n", start)
	}
	for i := start; i < end; i++ {
		mark := "  "
		if i == p.cur {
			mark = "› "
		}
		b.WriteString(mark + p.items[i])
		if p.items[i] == canonical(current) {
			b.WriteString("  (now)")
		}
		b.WriteString("\n")
	}
	if end < len(p.items) {
		fmt.Fprintf(&b, "  ↓ %d more\n", len(p.items)-end)
	}
	b.WriteString("↑↓ choose · Enter switch · Esc keep the model")
	return b.String()
}

// pickerKey moves in the picker, picks, or closes it.
func (m *Model) pickerKey(key string) {
	p := m.picker
	switch key {
	case "up", "k":
		p.cur = max(0, p.cur-1)
	case "down", "j":
		p.cur = min(len(p.items)-1, p.cur+1)
	case "enter":
		m.picker = nil
		p.pick(m, p.items[p.cur])
	case "esc", "ctrl+g":
		m.picker = nil
		m.hint = "model unchanged: " + m.eng.modelSpec()
	}
}

// model is /model: show and pick, or check and switch.
func (m *Model) model(spec string) {
	if spec == "" {
		items := knownModels(m.eng.prices())
		cur := canonical(m.eng.modelSpec())
		if !slices.Contains(items, cur) {
			items = append([]string{cur}, items...)
		}
		m.picker = &picker{title: "model: " + cur + " — switch to:", items: items, cur: slices.Index(items, cur),
			pick: func(m *Model, item string) { m.switchModel(item) }}
		return
	}
	m.switchModel(spec)
}

func (m *Model) switchModel(spec string) {
	if canonical(spec) == canonical(m.eng.modelSpec()) {
		m.notice(entryNotice, "model: "+spec+" (unchanged)")
		return
	}
	if err := checkModel(spec, m.eng.prices()); err != nil {
		m.notice(entryError, err.Error())
		return
	}
	if err := m.eng.setModel(spec); err != nil {
		m.notice(entryError, err.Error())
		return
	}
	m.notice(entryNotice, "model: "+spec+" (from the next turn)")
}
