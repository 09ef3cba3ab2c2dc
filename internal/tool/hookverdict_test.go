package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestHookVerdict: a hook's allow skips a prompt but never beats a deny
// rule or the read-only scope; its ask asks where a rule allows.
func TestHookVerdict(t *testing.T) {
	dir := t.TempDir()
	perms, err := NewPermissions("default", []string{"Bash(echo:*)"}, []string{"Bash(rm:*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(Builtins()...)
	asked := 0
	env := &Env{Dir: dir, Perms: perms, Interactive: true, Ask: func(string, string, string, []string) bool { asked++; return false }}
	run := func(verdict, cmd string, e *Env) Result {
		if verdict != "" {
			e = e.WithHookVerdict(verdict)
		}
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return set.Run(context.Background(), e, "Bash", in)
	}
	if r := run(HookAllow, "rm -rf x", env); !r.IsError || !strings.Contains(r.Content, "permission denied") {
		t.Errorf("allow over a deny rule ran: %+v", r)
	}
	if r := run(HookAllow, "ls", env); r.IsError || asked != 0 {
		t.Errorf("allow did not skip the prompt: %+v (asked %d)", r, asked)
	}
	if r := run(HookAsk, "echo hi", env); !r.IsError || asked != 1 {
		t.Errorf("ask over an allow rule did not ask: %+v (asked %d)", r, asked)
	}
	alone := &Env{Dir: dir, Perms: perms}
	if r := run(HookAsk, "echo hi", alone); !r.IsError || !strings.Contains(r.Content, "a PreToolUse hook asks for approval") || strings.Contains(r.Content, "remove") {
		t.Errorf("ask with no one to answer: %+v", r)
	}
	ro := &Env{Dir: dir, Perms: perms, ReadOnlyScope: true}
	if r := run(HookAllow, "echo hi", ro); !r.IsError || !strings.Contains(r.Content, "read-only") {
		t.Errorf("allow beat the read-only scope: %+v", r)
	}
}
