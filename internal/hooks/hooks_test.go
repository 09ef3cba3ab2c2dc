package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/tool"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		matcher, value string
		want           bool
	}{
		{"", "Bash", true},
		{"*", "Bash", true},
		{"Bash", "Bash", true},
		{"Bash", "BashOutput", false},
		{"Edit|Write", "Write", true},
		{"Edit|Write", "Read", false},
		{"Agent", "Task", true}, // Claude Code's name for brood's Task
		{"Notebook.*", "NotebookEdit", true},
		{"mcp__.*__write", "mcp__fs__write", true},
		{"^Re", "Read", true},
		{"(", "Read", false}, // does not compile: matches nothing
	} {
		if got := Match(c.matcher, c.value, toolAliases(c.value)...); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.matcher, c.value, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	js := `{"permissions":{"allow":["Bash"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hi","timeout":5}]}],"Notification":[{"hooks":[{"type":"command","command":"x"}]}]}}`
	c, err := ParseJSON("settings.json", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if g := c[PreToolUse]; len(g) != 1 || g[0].Matcher != "Bash" || g[0].Hooks[0].Command != "echo hi" || g[0].Hooks[0].timeout() != 5*time.Second {
		t.Errorf("json: %+v", c)
	}
	tm := "model = \"x\"\n[[hooks.SubagentStop]]\nmatcher = \"explore\"\n[[hooks.SubagentStop.hooks]]\ntype = \"command\"\ncommand = \"cat >> log\"\n"
	c, err = ParseTOML("settings.toml", []byte(tm))
	if err != nil {
		t.Fatal(err)
	}
	if g := c[SubagentStop]; len(g) != 1 || g[0].Hooks[0].Command != "cat >> log" || g[0].Hooks[0].timeout() != DefaultTimeout {
		t.Errorf("toml: %+v", c)
	}
	for _, bad := range []struct{ doc, want string }{
		{`{"hooks":{"PreToolUse":[{"hooks":[{"type":"prompt","command":"x"}]}]}}`, `type "prompt"`},
		{`{"hooks":{"Bogus":[]}}`, `unknown event "Bogus"`},
		{`{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"x"}]}]}}`, "not a valid regular expression"},
		{`{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":" "}]}]}}`, "has no command"},
		{"{\n\"hooks\": {,}}", "s.json:2:11: invalid character ','"},
	} {
		if _, err := ParseJSON("s.json", []byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.HasPrefix(err.Error(), "s.json") {
			t.Errorf("ParseJSON(%s) = %v, want an error naming the file and %q", bad.doc, err, bad.want)
		}
	}
	if _, err := ParseTOML("s.toml", []byte("[hooks\n")); err == nil || !strings.HasPrefix(err.Error(), "s.toml:") {
		t.Errorf("bad toml: %v", err)
	}
}

// TestLoadTrust: the user's hooks count; a project's only once trusted.
func TestLoadTrust(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"user"}]}]}}`)
	write(t, filepath.Join(root, ".claude", "settings.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"project"}]}]}}`)
	write(t, filepath.Join(root, ".brood", "settings.toml"), "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"brood-project\"\n")
	commands := func(c Config) []string {
		var out []string
		for _, g := range c[Stop] {
			for _, h := range g.Hooks {
				out = append(out, h.Command)
			}
		}
		return out
	}
	c, warns, err := Load(Sources{Home: home, ProjectRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := commands(c); !slices.Equal(got, []string{"user"}) || len(warns) != 1 || !strings.Contains(warns[0], "not trusted") {
		t.Errorf("untrusted: %v, warnings %v", got, warns)
	}
	var asked []string
	c, _, err = Load(Sources{Home: home, ProjectRoot: root, Trusted: func(r string, files []string) bool { asked = append(asked, files...); return true }})
	if err != nil {
		t.Fatal(err)
	}
	if got := commands(c); !slices.Equal(got, []string{"user", "project", "brood-project"}) || len(asked) != 2 {
		t.Errorf("trusted: %v (asked about %v)", got, asked)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runner(t *testing.T, event, matcher string, cmds ...string) *Runner {
	t.Helper()
	g := Group{Matcher: matcher}
	for _, c := range cmds {
		g.Hooks = append(g.Hooks, Command{Type: "command", Command: c, Timeout: 10})
	}
	var rep strings.Builder
	return New(Config{event: {g}}, Options{Dir: t.TempDir(), ProjectDir: "/proj", Env: []string{"PATH=" + os.Getenv("PATH")}, Report: &rep})
}

// TestOutputs runs real commands and reads them back as Claude Code does.
func TestOutputs(t *testing.T) {
	ctx := context.Background()
	call := agent.ToolCall{Name: "Bash", ID: "toolu_1", Input: json.RawMessage(`{"command":"rm -rf /"}`)}
	s := func(r *Runner) *Session { return NewSession(r, Common{SessionID: "S", Cwd: "/proj"}) }
	cases := []struct {
		name string
		cmds []string
		want agent.ToolGate
	}{
		{"exit 2 blocks with stderr", []string{"echo 'no rm' >&2; exit 2"}, agent.ToolGate{Deny: "blocked by a PreToolUse hook: no rm"}},
		{"deny", []string{`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"too wide"}}'`}, agent.ToolGate{Deny: "denied by a PreToolUse hook: too wide"}},
		{"allow with input", []string{`echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls"},"additionalContext":"be careful"}}'`}, agent.ToolGate{Verdict: tool.HookAllow, Input: json.RawMessage(`{"command":"ls"}`), Context: "be careful"}},
		{"deny beats ask beats allow", []string{`echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`, `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`}, agent.ToolGate{Verdict: tool.HookAsk}},
		{"the payload on stdin", []string{`grep -q '"tool_name":"Bash"' || exit 2; [ "$CLAUDE_PROJECT_DIR" = /proj ] || exit 2`}, agent.ToolGate{}},
		{"a failing hook is not fatal", []string{"exit 1", "sleep 0.01; echo '{not json'"}, agent.ToolGate{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s(runner(t, PreToolUse, "Bash", c.cmds...)).BeforeTool(ctx, call)
			if got.Deny != c.want.Deny || got.Verdict != c.want.Verdict || string(got.Input) != string(c.want.Input) || got.Context != c.want.Context {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
	if g := s(runner(t, PreToolUse, "Edit|Write", "exit 2")).BeforeTool(ctx, call); g.Deny != "" {
		t.Errorf("a hook for other tools ran: %+v", g)
	}
}

// TestTimeout: a hook that outlives its timeout is killed (its whole
// group) and reported; the call goes on.
func TestTimeout(t *testing.T) {
	g := Group{Hooks: []Command{{Type: "command", Command: "sleep 60 & wait", Timeout: 0.2}}}
	var rep strings.Builder
	r := New(Config{Stop: {g}}, Options{Dir: t.TempDir(), Report: &rep})
	res := r.Fire(context.Background(), Stop, "", StopInput{})
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "timed out") || !strings.Contains(rep.String(), "timed out") {
		t.Errorf("failures %v, report %q", res.Failures, rep.String())
	}
}

// TestStopAndPrompt: Stop's block keeps the run going; UserPromptSubmit's
// block refuses the prompt; plain stdout of UserPromptSubmit is context.
func TestStopAndPrompt(t *testing.T) {
	ctx := context.Background()
	s := NewSession(runner(t, Stop, "", `echo '{"decision":"block","reason":"run the tests first"}'`), Common{})
	if got := s.Stop(ctx, "done", false); got != "run the tests first" {
		t.Errorf("Stop: %q", got)
	}
	s = NewSession(runner(t, UserPromptSubmit, "", `grep -q secret && { echo 'no secrets' >&2; exit 2; }; echo 'today is Tuesday'`), Common{})
	if c, err := s.Prompt(ctx, "hello"); err != nil || c != "today is Tuesday" {
		t.Errorf("Prompt: %q, %v", c, err)
	}
	if _, err := s.Prompt(ctx, "my secret"); err == nil || !strings.Contains(err.Error(), "no secrets") {
		t.Errorf("blocked prompt: %v", err)
	}
}
