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
// (`timeout:`, `maxTurns:`, `limits:`): what raises the layers below the
// project waits for trust like the same raise in the project's settings
// (gate judges them against those layers: the spawner takes the smaller
// until the grant covers the file).
type AgentAsks struct {
	Name     string
	Timeout  time.Duration
	MaxTurns int
	Limits   limits.Set
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
