package cmdutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/mcpspec"
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
	if got, _ := f.ChildExeFor(delegator); got != self || !slices.Equal(asked(), []string{childexe.Name}) {
		t.Fatalf("a delegating child runs %q after asking for %v; want brood (%s), its own API's lean binary decided", got, asked(), self)
	}
	f.ChildExeFor(&dispatch.Envelope{Model: "ollama/qwen3", Tools: []string{"Read", "Task"}, AllowedDestinations: []string{"*"}, Depth: 1, MaxDepth: 1})
	if got := asked(); !slices.Equal(got, []string{childexe.Name, childexe.NameOpenAI}) {
		t.Fatalf("an OpenAI-API leaf at the cap asked for %v, want both names", got)
	}
	if c := f.ChildChoice(childexe.NameOpenAI); c.Lean || !strings.Contains(c.Why, "no "+childexe.NameOpenAI+" beside") {
		t.Errorf("choice for %s: %+v", childexe.NameOpenAI, c)
	}
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4318"
	if got, _ := f.ChildExeFor(&dispatch.Envelope{Model: "sonnet"}); got != self {
		t.Errorf("with telemetry on a leaf runs %q, want brood (%s): the lean binaries export nothing", got, self)
	}
	env["BROOD_CHILD_EXE"] = "/x/brood"
	if got, _ := f.ChildExeFor(delegator); got != "/x/brood" {
		t.Errorf("BROOD_CHILD_EXE does not override: %q", got)
	}
}

// TestVerifiedChoicePassesDown: a child that runs brood is told which lean
// binaries its parent proved (childexe.EnvVerified), and takes them without
// proving them again; a claim about another brood, or a binary not beside
// this one, is not taken.
func TestVerifiedChoicePassesDown(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lean := filepath.Join(filepath.Dir(self), childexe.Name)
	parent := NewFactory(IO{Out: os.Stdout, Err: os.Stderr})
	parent.child = map[string]childexe.Choice{childexe.Name: {Path: lean, Lean: true}} // as if proven
	delegator := &dispatch.Envelope{Model: "sonnet", Tools: []string{"Task"}, AllowedDestinations: []string{"*"}, MaxDepth: 2}
	exe, extra := parent.ChildExeFor(delegator)
	if exe != self || len(extra) != 1 || !strings.HasPrefix(extra[0], childexe.EnvVerified+"=") {
		t.Fatalf("delegating child: %q %v; want brood with %s", exe, extra, childexe.EnvVerified)
	}
	value := strings.TrimPrefix(extra[0], childexe.EnvVerified+"=")
	for _, tc := range []struct {
		name, value string
		lean        bool
	}{
		{"the parent's claim", value, true},
		{"about another brood", childexe.EncodeVerified("/elsewhere/brood", []string{"/elsewhere/brood-child"}), false},
		{"a binary not beside it", childexe.EncodeVerified(self, []string{"/tmp/evil/brood-child"}), false},
		{"garbage", "{", false},
	} {
		child := NewFactory(IO{Out: os.Stdout, Err: os.Stderr, Getenv: func(k string) string {
			if k == childexe.EnvVerified {
				return tc.value
			}
			return ""
		}})
		c := child.ChildChoice(childexe.Name)
		if c.Lean != tc.lean || (tc.lean && c.Path != lean) {
			t.Errorf("%s: %+v (no %s is beside the test binary, so only an honoured claim is lean)", tc.name, c, childexe.Name)
		}
	}
}

// TestNeedsBrood: which children the lean binaries cannot run (they link
// neither the delegation extras, nor an exporter, nor the scripted model,
// nor an MCP client).
func TestNeedsBrood(t *testing.T) {
	leaf := &dispatch.Envelope{Model: "sonnet", Tools: []string{"Read"}}
	delegator := &dispatch.Envelope{Model: "sonnet", Tools: []string{"Read", "Task"}, AllowedDestinations: []string{"*"}, Depth: 1, MaxDepth: 2}
	for _, tc := range []struct {
		name      string
		env       *dispatch.Envelope
		api       string
		telemetry bool
		want      bool
	}{
		{"an Anthropic leaf", leaf, "anthropic", false, false},
		{"an OpenAI leaf", &dispatch.Envelope{Model: "openai/gpt-5"}, "openai", false, false},
		{"a delegator", delegator, "anthropic", false, true},
		{"a leaf while telemetry is on", leaf, "anthropic", true, true},
		{"a leaf on the scripted model", &dispatch.Envelope{Model: "script"}, "script", false, true},
		{"a leaf with an MCP server", &dispatch.Envelope{Model: "sonnet", MCP: []mcpspec.Server{{Name: "docs"}}}, "anthropic", false, true},
	} {
		if got := needsBrood(tc.env, tc.api, tc.telemetry); got != tc.want {
			t.Errorf("%s: needsBrood = %v, want %v", tc.name, got, tc.want)
		}
	}
}
