package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/trust"
)

// fakeTool is a Tool whose behaviour a test chooses.
type fakeTool struct {
	name     string
	readOnly bool
	run      func(json.RawMessage) Result
}

func (f *fakeTool) Spec() model.ToolSpec {
	return model.ToolSpec{Name: f.name, Description: "fake", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"}},"required":["s"]}`)}
}
func (f *fakeTool) ReadOnly() bool { return f.readOnly }
func (f *fakeTool) Run(_ context.Context, _ *Env, in json.RawMessage) Result {
	return f.run(in)
}

func TestSetRun(t *testing.T) {
	ok := func(json.RawMessage) Result { return Result{Content: "ran"} }
	set := NewSet(
		&fakeTool{name: "Peek", readOnly: true, run: ok},
		&fakeTool{name: "Poke", run: ok},
		&fakeTool{name: "Boom", readOnly: true, run: func(json.RawMessage) Result { panic("kaboom") }},
	)
	deny, err := NewPermissions("default", nil, []string{"Peek"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     Env
		tool    string
		input   string
		wantErr bool
		want    []string
	}{
		{name: "runs", tool: "Peek", input: `{"s":"x"}`, want: []string{"ran"}},
		{name: "any case", tool: "pOKE", input: `{"s":"x"}`, want: []string{"ran"}},
		{name: "unknown tool", tool: "Nope", input: `{}`, wantErr: true, want: []string{`unknown tool "Nope"`, "Boom, Peek, Poke"}},
		{name: "not json", tool: "Peek", input: `{"s":`, wantErr: true, want: []string{"invalid input for Peek", "must be a JSON object", `"required":["s"]`}},
		{name: "not object", tool: "Peek", input: `[1]`, wantErr: true, want: []string{"must be a JSON object"}},
		{name: "missing required", tool: "Peek", input: `{}`, wantErr: true, want: []string{`required property "s" is missing`}},
		{name: "wrong type", tool: "Peek", input: `{"s":"x","n":"five"}`, wantErr: true, want: []string{`property "n" must be of type integer, got string`}},
		{name: "float for integer", tool: "Peek", input: `{"s":"x","n":1.5}`, wantErr: true, want: []string{"got number"}},
		{name: "integral float ok", tool: "Peek", input: `{"s":"x","n":2.0}`, want: []string{"ran"}},
		{name: "panic recovered", tool: "Boom", input: `{"s":"x"}`, wantErr: true, want: []string{"the Boom tool crashed (kaboom)"}},
		{name: "read-only scope refuses", env: Env{ReadOnlyScope: true}, tool: "Poke", input: `{"s":"x"}`, wantErr: true, want: []string{"Poke is not available", "read-only", "(Peek, Boom)"}},
		{name: "read-only scope allows", env: Env{ReadOnlyScope: true}, tool: "Peek", input: `{"s":"x"}`, want: []string{"ran"}},
		{name: "denied by rule", env: Env{Perms: deny}, tool: "Peek", input: `{"s":"x"}`, wantErr: true, want: []string{"permission denied: Peek is refused", `deny rule "Peek"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			res := set.Run(context.Background(), &env, tt.tool, json.RawMessage(tt.input))
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v, want %v; content: %s", res.IsError, tt.wantErr, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result %q does not contain %q", res.Content, w)
				}
			}
		})
	}
}

func TestSetRunPermissionPrompt(t *testing.T) {
	dir := t.TempDir()
	perms, err := NewPermissions("default", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(Builtins()...)
	in := bashIn("rm -rf build")

	t.Run("non-interactive names the rule", func(t *testing.T) {
		env := &Env{Dir: dir, Perms: perms}
		res := set.Run(context.Background(), env, "Bash", in)
		want := `permission denied: Bash "rm -rf build" needs approval (no allow rule matches) and no one is here to give it; no rule to keep is suggested (one for "rm" would allow far more than this call): approve the call when asked (run brood without -p), or pass --allow 'Bash(rm -rf build)' for one run`
		if !res.IsError || res.Content != want {
			t.Fatalf("got %q\nwant %q", res.Content, want)
		}
	})
	t.Run("ask rule names itself", func(t *testing.T) {
		p, _ := NewPermissions("default", []string{"Bash"}, nil, []string{"Bash(rm:*)"})
		p = p.WithAskFrom([]trust.RuleFiles{{Rule: "Bash(rm:*)", Files: []string{"~/.claude/settings.json", ".brood/settings.local.toml"}}})
		res := set.Run(context.Background(), &Env{Dir: dir, Perms: p}, "Bash", in)
		if !res.IsError || !strings.Contains(res.Content, `remove "Bash(rm:*)" from the permissions ask list of ~/.claude/settings.json, .brood/settings.local.toml`) {
			t.Fatalf("got %q", res.Content)
		}
	})
	for _, answer := range []bool{true, false} {
		var asked []string
		env := &Env{Dir: dir, Perms: perms, Interactive: true, Ask: func(tool, subject, _ string, _ []string) bool {
			asked = append(asked, tool+" "+subject)
			return answer
		}}
		res := set.Run(context.Background(), env, "Write", json.RawMessage(`{"file_path":"a.txt","content":"hi"}`))
		if len(asked) != 1 || asked[0] != "Write "+filepath.Join(dir, "a.txt") {
			t.Fatalf("Ask calls = %q", asked)
		}
		_, statErr := os.Stat(filepath.Join(dir, "a.txt"))
		if answer && (res.IsError || statErr != nil) {
			t.Fatalf("approved write failed: %q, %v", res.Content, statErr)
		}
		if !answer && (!res.IsError || !strings.Contains(res.Content, "the user declined Write")) {
			t.Fatalf("declined write: %q", res.Content)
		}
		os.Remove(filepath.Join(dir, "a.txt"))
	}
}

// TestAskNamesTheOption: an interactive ask for a command an allow rule
// covers by its prefix is told why it asks, naming the option that
// writes a file or runs a program (git log --output, find -exec, sed -i).
func TestAskNamesTheOption(t *testing.T) {
	dir := t.TempDir()
	set := NewSet(Builtins()...)
	for _, c := range []struct {
		rule, command, opt string
	}{
		{"Bash(git log:*)", "git log -1 --output=x.txt", "--output"},
		{"Bash(find:*)", "find . -name x -exec rm {} ;", "-exec"},
		{"Bash(sed:*)", "sed -i s/a/b/ README.md", "-i"},
	} {
		t.Run(c.opt, func(t *testing.T) {
			perms, err := NewPermissions("default", []string{c.rule}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			env := &Env{Dir: dir, Perms: perms, Interactive: true, Ask: func(_, _, reason string, _ []string) bool {
				reasons = append(reasons, reason)
				return false
			}}
			in, _ := json.Marshal(map[string]string{"command": c.command})
			set.Run(context.Background(), env, "Bash", in)
			if len(reasons) != 1 || !strings.Contains(reasons[0], "not "+c.opt+",") || !strings.Contains(reasons[0], c.rule) {
				t.Fatalf("Ask was told %q; want the rule %s and the option %s named", reasons, c.rule, c.opt)
			}
		})
	}
}

func TestSetLookupAndSpecs(t *testing.T) {
	set := NewSet(Builtins()...)
	want := []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS", "WebFetch", "WebSearch"}
	if got := set.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Names = %v, want %v", got, want)
	}
	for _, n := range []string{"read", "ls", "GREP", "Bash"} {
		if _, ok := set.Get(n); !ok {
			t.Errorf("Get(%q) found nothing", n)
		}
	}
	for i, s := range set.Specs() {
		if s.Name != want[i] || len(s.Description) < 100 {
			t.Errorf("spec %d: name %q, description %d bytes", i, s.Name, len(s.Description))
		}
		var schema map[string]any
		if err := json.Unmarshal(s.Schema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema is not a JSON object schema: %v", s.Name, err)
		}
	}
	// A later tool of the same name replaces the earlier one in place of order.
	mine := &fakeTool{name: "bash", run: func(json.RawMessage) Result { return Result{Content: "mine"} }}
	over := NewSet(append(Builtins(), mine)...)
	if got, _ := over.Get("Bash"); got != mine || len(over.Names()) != 9 {
		t.Fatalf("override failed: %v", over.Names())
	}
	// Names is the tools' own spelling, in the order Specs gives them.
	for i, sp := range over.Specs() {
		if n := over.Names()[i]; n != sp.Name {
			t.Fatalf("Names()[%d] = %q, Specs()[%d] %q", i, n, i, sp.Name)
		}
	}
	ro := map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true, "WebFetch": true, "WebSearch": true}
	for _, tl := range Builtins() {
		if tl.ReadOnly() != ro[tl.Spec().Name] {
			t.Errorf("%s.ReadOnly() = %v", tl.Spec().Name, tl.ReadOnly())
		}
	}
}
