package settings

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/guard"
	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/trust"
)

// PricesFile is the project file whose [prices] brood reads (the user's
// settings.toml is the other).
const PricesFile = ".brood/settings.toml"

// projectPrices says, for the trust line, which models the project's
// settings file prices ([prices]; the settings load skips the table, the
// price table reads it): what brood counts a run's cost with, so a price
// of 0 would disarm --max-budget-usd and zero every cost shown. They wait
// for trust like the other widening keys (the price table takes them only
// from a file the grant covers: cmdutil.Factory.Prices).
func projectPrices(files []trust.File) []string {
	for _, f := range files {
		if f.Rel != PricesFile {
			continue
		}
		var doc struct {
			Prices map[string]toml.Primitive `toml:"prices"`
		}
		if _, err := toml.Decode(string(f.Data), &doc); err != nil || len(doc.Prices) == 0 {
			return nil
		}
		return []string{fmt.Sprintf("prices for %s (%s: brood would count the run's cost with them, for --max-budget-usd and every cost it shows)",
			strings.Join(slices.Sorted(maps.Keys(doc.Prices)), ", "), f.Rel)}
	}
	return nil
}

// addedTests are the commands of full's test_commands that the layers
// below (base's, else guard's defaults) do not already count as running
// tests: the evidence guardrail would take a run of `true` for one. A
// command that only narrows one of them (`go test ./...` under `go test`)
// adds nothing.
func addedTests(base, full []string) []string {
	if full == nil {
		return nil
	}
	if base == nil {
		base = guard.DefaultTestCommands()
	}
	norm := func(c string) string { return strings.Join(strings.Fields(c), " ") }
	var out []string
	for _, c := range full {
		c = norm(c)
		if !slices.ContainsFunc(base, func(b string) bool { b = norm(b); return c == b || strings.HasPrefix(c, b+" ") }) {
			out = append(out, strconv.Quote(c))
		}
	}
	return out
}

// AgentAsks are the limits a project agent file sets for its own child
// (`timeout:`, `maxTurns:`, `limits:`) and its `isolation:`: what raises the layers below the
// project waits for trust like the same raise in the project's settings
// (gate judges them against those layers: the spawner takes the smaller
// until the grant covers the file).
type AgentAsks struct {
	Name     string
	Timeout  time.Duration
	MaxTurns int
	Limits   limits.Set
	// Isolation is the file's isolation: (none, auto, worktree), judged
	// against the settings' agents.isolation (LooserIsolation).
	Isolation string
}

// beyond says what a asks above base, in the trust line's words.
func (a AgentAsks) beyond(base Settings, rel string) []string {
	var out []string
	if b := base.Pool.TimeoutFor(a.Name); b > 0 && a.Timeout > b {
		out = append(out, fmt.Sprintf("agent %s's timeout %s, above %s (%s)", a.Name, a.Timeout, b, rel))
	}
	if base.MaxTurns > 0 && a.MaxTurns > base.MaxTurns {
		out = append(out, fmt.Sprintf("agent %s's maxTurns %d, above %d (%s)", a.Name, a.MaxTurns, base.MaxTurns, rel))
	}
	if LooserIsolation(a.Isolation, base.Agents.Isolation) {
		out = append(out, fmt.Sprintf("agent %s's isolation %s, where yours is %s: it would write in place on your tree (%s)", a.Name, a.Isolation, cmp.Or(base.Agents.Isolation, "auto"), rel))
	}
	if l, err := base.Limits.Child(); err == nil {
		if _, raised := l.Lower(a.Limits); len(raised) > 0 {
			out = append(out, fmt.Sprintf("agent %s's limits %s (%s)", a.Name, strings.Join(raised, ", "), rel))
		}
	}
	return out
}

// effortRank orders efforts by what a call spends; the model's default
// ("") is taken as high.
func effortRank(e string) int64 {
	return int64(slices.Index([]string{"low", "medium", "high", "xhigh", "max"}, cmp.Or(e, "high")))
}

// childrenRank orders project_files.children by how many subagents get
// the instruction files.
func childrenRank(c string) int64 {
	return int64(slices.Index([]string{ChildrenNone, ChildrenWriters, ChildrenAll}, cmp.Or(c, ChildrenWriters)))
}

// isolationRank orders isolation modes by how much of a writer they keep
// off the work tree: none (in place, always), auto (the default: a copy
// when another writer works), worktree (always a copy).
func isolationRank(mode string) int {
	switch mode {
	case "none":
		return 0
	case "worktree":
		return 2
	}
	return 1
}

// LooserIsolation reports whether an agent file's isolation mode keeps
// less of a writer off the work tree than base (the settings'): an
// untrusted project agent's looser mode waits for trust (the spawner
// applies base's until the grant covers the file). An agent that names
// no mode is never looser.
func LooserIsolation(mode, base string) bool {
	return mode != "" && isolationRank(mode) < isolationRank(base)
}

// restrictLoosened sets back what the project layers loosen that is no
// limit: how writers are kept off the work tree (agents.isolation), the
// agent definitions read (agents.claude), and the instruction files every
// agent reads, which include your own ~/.claude/CLAUDE.md
// (project_files.off, and project_files.children, .max_bytes and
// .child_max_bytes below yours: they would drop or cut it). Their raises
// are restrict's limits.
func restrictLoosened(base, full Settings, out *Settings) (why, keys []string) {
	add := func(key, text string) { why, keys = append(why, key+" "+text), append(keys, key) }
	if isolationRank(full.Agents.Isolation) < isolationRank(base.Agents.Isolation) {
		add("agents.isolation", fmt.Sprintf("%s (writers would work in place on your tree where yours, %s, gives them a copy)", full.Agents.Isolation, cmp.Or(base.Agents.Isolation, "auto")))
		out.Agents.Isolation = base.Agents.Isolation
	}
	if full.Agents.ClaudeEnabled() && !base.Agents.ClaudeEnabled() {
		add("agents.claude", "true (agent definitions in .claude/agents, which yours turns off)")
		out.Agents.Claude = base.Agents.Claude
	}
	pf, bf := full.ProjectFiles, base.ProjectFiles
	const yours = "your own ~/.claude/CLAUDE.md"
	if pf.Off && !bf.Off {
		add("project_files.off", "(every agent would lose the instruction files, "+yours+" too)")
		out.ProjectFiles.Off = false
	}
	if childrenRank(pf.Children) < childrenRank(bf.Children) {
		add("project_files.children", pf.Children+" (subagents would lose the instruction files, "+yours+" too)")
		out.ProjectFiles.Children = bf.Children
	}
	if pf.MaxBytes < bf.MaxBytes {
		add("project_files.max_bytes", fmt.Sprintf("%d (the instruction files, %s too, would be cut there)", pf.MaxBytes, yours))
		out.ProjectFiles.MaxBytes = bf.MaxBytes
	}
	if pf.ChildMaxBytes < bf.ChildMaxBytes {
		add("project_files.child_max_bytes", fmt.Sprintf("%d (the instruction files, %s too, would be cut there in a subagent)", pf.ChildMaxBytes, yours))
		out.ProjectFiles.ChildMaxBytes = bf.ChildMaxBytes
	}
	return why, keys
}

// modelWhy is the trust line's words for a project's model choice.
func modelWhy(full Settings) string {
	switch {
	case full.modelClaude:
		return "model " + full.Model + " (.claude/settings.json chooses the model: what the run costs and which provider gets your code)"
	case ScriptModel(full.Model):
		return "model " + full.Model + " (a script of the repository's would decide every tool call in your place)"
	}
	return "model " + full.Model + " (.brood/settings.toml chooses the model: what the run costs and which provider gets your code)"
}
