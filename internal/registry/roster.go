package registry

import (
	"strings"
	"unicode/utf8"
)

// rosterDescriptionLimit bounds each description in the roster: the roster
// goes into the Task tool's description on every request, and published
// descriptions run to pages of examples.
const rosterDescriptionLimit = 300

// Roster renders the agents the Task tool offers, one line each, sorted by
// name: "- name: summary". The same registry always renders the same bytes,
// so the prompt prefix stays cacheable.
func (r *Registry) Roster() string {
	var b strings.Builder
	for _, d := range r.sorted {
		if d.Unresolvable {
			continue // no usable tool: not offered to the model
		}
		b.WriteString("- ")
		b.WriteString(d.Name)
		b.WriteString(": ")
		b.WriteString(Summary(d.Description, rosterDescriptionLimit))
		b.WriteByte('\n')
	}
	return b.String()
}

// Summary shortens a description to its first paragraph, stopping before any
// <example> block and at most max bytes long (cut at a word, with an
// ellipsis), on one line. Descriptions written as one YAML line often spell
// their paragraph breaks as a literal "\n", so that counts as a break too.
func Summary(desc string, max int) string {
	s := strings.ReplaceAll(desc, `\n`, "\n")
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(strings.ToLower(s), "<example"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > max/2 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}
