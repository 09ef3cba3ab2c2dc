package cmdutil

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestChildExeForRoutes: a child that cannot delegate runs the lean binary
// of its model's wire API (brood-child, brood-child-openai: asked for by
// name); one that may delegate, and every child while telemetry is on,
// runs brood itself without asking for a lean one.
func TestChildExeForRoutes(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	f := NewFactory(IO{Out: os.Stdout, Err: os.Stderr, Getenv: func(k string) string { return env[k] }})
	asked := func() []string {
		f.childMu.Lock()
		defer f.childMu.Unlock()
		var out []string
		for k := range f.child {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	delegator := &dispatch.Envelope{Model: "sonnet", Tools: []string{"Read", "Task"}, AllowedDestinations: []string{"*"}, Depth: 1, MaxDepth: 2}
	if got := f.ChildExeFor(delegator); got != self || len(asked()) != 0 {
		t.Fatalf("a delegating child runs %q after asking for %v; want brood (%s), no lean binary asked for", got, asked(), self)
	}
	f.ChildExeFor(&dispatch.Envelope{Model: "sonnet", Tools: []string{"Read"}})
	if got := asked(); !slices.Equal(got, []string{childexe.Name}) {
		t.Fatalf("an Anthropic leaf asked for %v, want [%s]", got, childexe.Name)
	}
	f.ChildExeFor(&dispatch.Envelope{Model: "ollama/qwen3", Tools: []string{"Read", "Task"}, AllowedDestinations: []string{"*"}, Depth: 1, MaxDepth: 1})
	if got := asked(); !slices.Equal(got, []string{childexe.Name, childexe.NameOpenAI}) {
		t.Fatalf("an OpenAI-API leaf at the cap asked for %v, want both names", got)
	}
	if c := f.ChildChoice(childexe.NameOpenAI); c.Lean || !strings.Contains(c.Why, "no "+childexe.NameOpenAI+" beside") {
		t.Errorf("choice for %s: %+v", childexe.NameOpenAI, c)
	}
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4318"
	if got := f.ChildExeFor(&dispatch.Envelope{Model: "sonnet"}); got != self {
		t.Errorf("with telemetry on a leaf runs %q, want brood (%s): the lean binaries export nothing", got, self)
	}
	env["BROOD_CHILD_EXE"] = "/x/brood"
	if got := f.ChildExeFor(delegator); got != "/x/brood" {
		t.Errorf("BROOD_CHILD_EXE does not override: %q", got)
	}
}
