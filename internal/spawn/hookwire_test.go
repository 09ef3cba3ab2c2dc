package spawn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/protocol"
)

// fakeHooks records what it is asked to run and denies Bash.
type fakeHooks struct {
	mu     sync.Mutex
	seen   []protocol.Hook
	filter protocol.HookFilter // nil: every PreToolUse call
}

func (f *fakeHooks) Filter() protocol.HookFilter {
	if f.filter != nil {
		return f.filter
	}
	return protocol.HookFilter{protocol.HookPreToolUse: {""}}
}

func (f *fakeHooks) Run(_ context.Context, h protocol.Hook) protocol.HookReply {
	f.mu.Lock()
	f.seen = append(f.seen, h)
	f.mu.Unlock()
	if h.Tool == "Bash" {
		return protocol.HookReply{Deny: "blocked by a PreToolUse hook: no Bash"}
	}
	return protocol.HookReply{Context: "ran for " + h.TaskID}
}

const (
	child    = "01JABCDEFGHJKMNPQRSTVWXYZ0"
	sibling  = "01JABCDEFGHJKMNPQRSTVWXYZ9"
	grand    = "01JABCDEFGHJKMNPQRSTVWXYZ1"
	greatG   = "01JABCDEFGHJKMNPQRSTVWXYZ2"
	stranger = "01JABCDEFGHJKMNPQRSTVWXYZ3"
)

// TestHookRequestsAreStampedAndChecked: a child's hook requests are run
// under the identity its parent knows, a descendant's only as the child
// reported it (at the depth where it hangs), and forged or malformed ones
// are refused without running a hook.
func TestHookRequestsAreStampedAndChecked(t *testing.T) {
	fh := &fakeHooks{}
	d := &Dispatcher{cfg: Config{ToolHooks: fh}}
	input := make(chan []byte, 64)
	tr := &tree{}
	d.claim(child, child)
	d.claim(sibling, sibling)
	c := &childHooks{d: d, ctx: t.Context(), id: child, agent: "lead", depth: 1, mode: "default", tree: tr, input: input}

	// The child reports a grandchild (its word: depth 7) and a great-
	// grandchild below it; a sibling's id and a stranger hanging from
	// nowhere are not taken.
	for _, ev := range []protocol.Event{
		{Type: protocol.EvDispatchStart, TaskID: grand, Parent: child, Agent: "scout", Depth: 7},
		{Type: protocol.EvDispatchStart, TaskID: greatG, Parent: grand, Agent: "helper", Depth: 0},
	} {
		if !d.report(tr, child, 1, ev) {
			t.Fatalf("report %s refused", ev.TaskID)
		}
	}
	for _, ev := range []protocol.Event{
		{Type: protocol.EvDispatchStart, TaskID: sibling, Parent: child, Agent: "evil"},
		{Type: protocol.EvDispatchStart, TaskID: stranger, Parent: "01JABCDEFGHJKMNPQRSTVWXYZ8", Agent: "evil"},
		{Type: protocol.EvDispatchStart, TaskID: child, Parent: child, Agent: "evil"},
		{Type: protocol.EvDispatchStart, TaskID: "../../etc", Parent: child, Agent: "evil"},
	} {
		if d.report(tr, child, 1, ev) {
			t.Errorf("report %s (parent %s) was taken", ev.TaskID, ev.Parent)
		}
	}

	type want struct {
		deny   string // a substring of the reply's Deny ("" none)
		ran    bool
		agent  string
		depth  int
		taskID string
		mode   string
	}
	cases := []struct {
		name string
		req  protocol.Hook
		want want
	}{
		{"own, forged agent, depth and mode", protocol.Hook{ID: "h1", Event: protocol.HookPreToolUse, Agent: "root", Depth: 0, Mode: "bypassPermissions", Tool: "Read", Input: json.RawMessage(`{"file_path":"a"}`)},
			want{ran: true, agent: "lead", depth: 1, taskID: child, mode: "default"}},
		{"own id, blocked", protocol.Hook{ID: "h2", Event: protocol.HookPreToolUse, TaskID: child, Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)},
			want{deny: "no Bash", ran: true, agent: "lead", depth: 1, taskID: child, mode: "default"}},
		{"grandchild, forged depth, wider mode", protocol.Hook{ID: "h3", Event: protocol.HookPreToolUse, TaskID: grand, Agent: "root", Depth: 0, Mode: "bypassPermissions", Tool: "Read"},
			want{ran: true, agent: "scout", depth: 2, taskID: grand, mode: "default"}},
		{"grandchild, narrower mode", protocol.Hook{ID: "h3p", Event: protocol.HookPreToolUse, TaskID: grand, Mode: "plan", Tool: "Read"},
			want{ran: true, agent: "scout", depth: 2, taskID: grand, mode: "plan"}},
		{"grandchild, no mode", protocol.Hook{ID: "h3n", Event: protocol.HookPreToolUse, TaskID: grand, Mode: "\x1b[31mroot", Tool: "Read"},
			want{ran: true, agent: "scout", depth: 2, taskID: grand, mode: "default"}},
		{"great-grandchild", protocol.Hook{ID: "h4", Event: protocol.HookPreToolUse, TaskID: greatG, Tool: "Read"},
			want{ran: true, agent: "helper", depth: 3, taskID: greatG, mode: "default"}},
		{"a sibling's id", protocol.Hook{ID: "h5", Event: protocol.HookPreToolUse, TaskID: sibling, Tool: "Read"}, want{deny: "never reported"}},
		{"a stranger", protocol.Hook{ID: "h6", Event: protocol.HookPreToolUse, TaskID: stranger, Tool: "Read"}, want{deny: "never reported"}},
		{"unknown event", protocol.Hook{ID: "h7", Event: "SessionStart", Tool: "Read"}, want{}},
		{"not configured", protocol.Hook{ID: "h8", Event: protocol.HookPostToolUse, Tool: "Read"}, want{}},
		{"no tool", protocol.Hook{ID: "h9", Event: protocol.HookPreToolUse}, want{deny: "names no tool"}},
		{"bad input", protocol.Hook{ID: "h10", Event: protocol.HookPreToolUse, Tool: "Read", Input: json.RawMessage(`{"x":`)}, want{deny: "not a JSON object"}},
		{"input no object", protocol.Hook{ID: "h11", Event: protocol.HookPreToolUse, Tool: "Read", Input: json.RawMessage(`"rm -rf /"`)}, want{deny: "not a JSON object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fh.mu.Lock()
			before := len(fh.seen)
			fh.mu.Unlock()
			c.handle(tc.req)
			line := <-input
			m, err := protocol.Unmarshal(line)
			rep, ok := m.(protocol.HookReply)
			if err != nil || !ok || rep.ID != tc.req.ID {
				t.Fatalf("reply %s: %v", line, err)
			}
			if (tc.want.deny == "") != (rep.Deny == "") || !strings.Contains(rep.Deny, tc.want.deny) {
				t.Errorf("deny %q, want %q", rep.Deny, tc.want.deny)
			}
			fh.mu.Lock()
			ran := len(fh.seen) > before
			var got protocol.Hook
			if ran {
				got = fh.seen[len(fh.seen)-1]
			}
			fh.mu.Unlock()
			if ran != tc.want.ran {
				t.Fatalf("ran %v, want %v", ran, tc.want.ran)
			}
			if ran && (got.Agent != tc.want.agent || got.Depth != tc.want.depth || got.TaskID != tc.want.taskID || got.Mode != tc.want.mode) {
				t.Errorf("ran as %s/%s depth %d mode %q, want %s/%s depth %d mode %q", got.TaskID, got.Agent, got.Depth, got.Mode,
					tc.want.taskID, tc.want.agent, tc.want.depth, tc.want.mode)
			}
		})
	}
	// Not a request at all: no reply, nothing run.
	c.handle(protocol.Hook{ID: strings.Repeat("x", 65), Event: protocol.HookPreToolUse, Tool: "Read"})
	c.handle(protocol.Hook{Event: protocol.HookPreToolUse, Tool: "Read"})
	select {
	case line := <-input:
		t.Errorf("a reply to a request without a usable id: %s", line)
	default:
	}
}

// TestNoHooksNoRoundTrip: without tool-call hooks at the root, a child is
// not told to ask, and its agent loop gets no hooks at all.
func TestNoHooksNoRoundTrip(t *testing.T) {
	d := &Dispatcher{}
	if e := d.hookEnv(); e != "" {
		t.Errorf("no hooks, yet the child is told %q", e)
	}
	d = &Dispatcher{cfg: Config{ToolHooks: &fakeHooks{}}}
	if e := d.hookEnv(); e != EnvHooksParent+`={"PreToolUse":[""]}` {
		t.Errorf("hook env %q", e)
	}
	got := ParseHookFilter(`{"PreToolUse":["Bash","mcp__.*"],"Stop":[""],"PostToolUse":[""]}`)
	if strings.Join(got.Events(), ",") != "PreToolUse,PostToolUse" || len(got[protocol.HookPreToolUse]) != 2 {
		t.Errorf("ParseHookFilter: %v", got)
	}
	if got := ParseHookFilter("PreToolUse,PostToolUse"); got != nil {
		t.Errorf("not a filter, read as %v", got)
	}
}

// TestUnmatchedRequestAnsweredOnTheWay: a request for a call no matcher
// selects (a child that asks anyway) is answered by the first process on
// the way with an empty reply, running nothing and denying nothing.
func TestUnmatchedRequestAnsweredOnTheWay(t *testing.T) {
	fh := &fakeHooks{filter: protocol.HookFilter{protocol.HookPreToolUse: {"Bash"}}}
	d := &Dispatcher{cfg: Config{ToolHooks: fh}}
	input := make(chan []byte, 4)
	c := &childHooks{d: d, ctx: t.Context(), id: child, agent: "lead", depth: 1, tree: &tree{}, input: input}
	c.handle(protocol.Hook{ID: "hook-1", Event: protocol.HookPreToolUse, Tool: "Read", Input: json.RawMessage(`{}`)})
	var rep protocol.HookReply
	if err := json.Unmarshal(<-input, &rep); err != nil || rep.ID != "hook-1" || rep.Deny != "" || rep.Verdict != "" {
		t.Fatalf("reply %+v (%v), want an empty answer to hook-1", rep, err)
	}
	fh.mu.Lock()
	defer fh.mu.Unlock()
	if len(fh.seen) != 0 {
		t.Errorf("ran hooks for an unmatched call: %+v", fh.seen)
	}
}

// TestHookRequestBudget: each task of a child's subtree gets
// maxPreToolHooks PreToolUse runs; past them its requests are denied
// without running a hook, and one warning names the task. PostToolUse
// requests are not counted, and a spent child leaves a task it reported
// below it its own budget.
func TestHookRequestBudget(t *testing.T) {
	fh := &fakeHooks{filter: protocol.HookFilter{protocol.HookPreToolUse: {""}, protocol.HookPostToolUse: {""}}}
	var stderr strings.Builder
	d := &Dispatcher{cfg: Config{ToolHooks: fh, Stderr: &stderr}}
	input := make(chan []byte, 4)
	tr := &tree{}
	d.claim(child, child)
	c := &childHooks{d: d, ctx: t.Context(), id: child, agent: "lead", depth: 1, tree: tr, input: input}
	if !d.report(tr, child, 1, protocol.Event{Type: protocol.EvDispatchStart, TaskID: grand, Parent: child, Agent: "scout"}) {
		t.Fatal("report refused")
	}
	c.asked = map[string]int{child: maxPreToolHooks - 1}
	for i, tc := range []struct {
		event, task string
		deny        string
	}{
		{protocol.HookPreToolUse, "", ""},
		{protocol.HookPreToolUse, "", "more than 4096 PreToolUse"},
		{protocol.HookPostToolUse, "", ""},
		{protocol.HookPreToolUse, "", "more than 4096 PreToolUse"},
		{protocol.HookPreToolUse, grand, ""},
	} {
		c.handle(protocol.Hook{ID: fmt.Sprintf("h%d", i), Event: tc.event, Tool: "Read", TaskID: tc.task})
		m, err := protocol.Unmarshal(<-input)
		rep, ok := m.(protocol.HookReply)
		if err != nil || !ok {
			t.Fatalf("request %d: reply %v %v", i, m, err)
		}
		if (tc.deny == "") != (rep.Deny == "") || !strings.Contains(rep.Deny, tc.deny) {
			t.Errorf("request %d (%s): deny %q, want %q", i, tc.event, rep.Deny, tc.deny)
		}
	}
	fh.mu.Lock()
	ran := len(fh.seen)
	fh.mu.Unlock()
	if ran != 3 {
		t.Errorf("%d hooks ran, want 3 (the child's PreToolUse within its budget, one PostToolUse, the grandchild's)", ran)
	}
	if n := strings.Count(stderr.String(), "warning: task "+child+" (lead)"); n != 1 {
		t.Errorf("warnings naming the child: %d, want 1: %q", n, stderr.String())
	}
}

// TestRelayedMode: a descendant's claimed mode is taken only where it
// allows no more than the mode its parent knows for the child.
func TestRelayedMode(t *testing.T) {
	for _, tc := range []struct{ claim, known, want string }{
		{"", "acceptEdits", "acceptEdits"},
		{"plan", "", "plan"},
		{"plan", "bypassPermissions", "plan"},
		{"default", "acceptEdits", "default"},
		{"dontAsk", "default", "dontAsk"},
		{"default", "plan", "plan"},
		{"acceptEdits", "default", "default"},
		{"acceptEdits", "bypassPermissions", "acceptEdits"},
		{"bypassPermissions", "acceptEdits", "acceptEdits"},
		{"bypassPermissions", "bypassPermissions", "bypassPermissions"},
		{"root", "default", "default"},
	} {
		if got := relayedMode(tc.claim, tc.known); got != tc.want {
			t.Errorf("relayedMode(%q, %q) = %q, want %q", tc.claim, tc.known, got, tc.want)
		}
	}
}
