package childrun

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/hooks"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/tool"
)

// TestNoHookEventsNoAgentHooks: a child told of no hook events gets no
// agent hooks at all (no round trip per call).
func TestNoHookEventsNoAgentHooks(t *testing.T) {
	if h := newChildAgentHooks(&parentLink{}, nil, hooks.Here{}); h != nil {
		t.Errorf("a child with no hook events has agent hooks: %v", h)
	}
}

// TestChildAsksOnlyWhenAMatcherSelects: a child sends a hook request up
// only for a call a matcher of the root's hooks selects (Claude Code's
// matchers: names, | lists, regular expressions, Task as Agent); any other
// call runs with no round trip.
func TestChildAsksOnlyWhenAMatcherSelects(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	l := &parentLink{out: &events{up: protocol.NewWriter(pw)},
		hookFilter: protocol.HookFilter{protocol.HookPreToolUse: {"Bash", "Edit|Write", "^mcp__"}, protocol.HookPostToolUse: {"Agent"}}}
	env := &dispatch.Envelope{TaskID: child, TargetAgent: "lead"}
	h := newChildAgentHooks(l, env, hooks.Here{})
	sent := make(chan protocol.Hook, 8)
	go func() {
		for m, err := range protocol.Read(pr) {
			if hk, ok := m.(protocol.Hook); ok && err == nil {
				sent <- hk
				l.mu.Lock()
				ch := l.hooks[hk.ID]
				delete(l.hooks, hk.ID)
				l.mu.Unlock()
				ch <- protocol.HookReply{ID: hk.ID}
			}
		}
	}()
	call := func(name string) agent.ToolCall {
		return agent.ToolCall{Name: name, ID: "toolu_" + name, Input: json.RawMessage(`{}`)}
	}
	for _, tc := range []struct {
		tool      string
		pre, post bool
	}{
		{"Read", false, false}, {"Bash", true, false}, {"Write", true, false}, {"Grep", false, false},
		{"mcp__github__search", true, false}, {"Task", false, true}, {"BashOutput", false, false},
	} {
		h.BeforeTool(t.Context(), call(tc.tool))
		h.AfterTool(t.Context(), call(tc.tool), tool.Result{Content: "ok"}, time.Millisecond)
		var got []string
	drain:
		for {
			select {
			case hk := <-sent:
				if hk.Tool != tc.tool {
					t.Fatalf("%s: a request for %s", tc.tool, hk.Tool)
				}
				got = append(got, hk.Event)
			default:
				break drain
			}
		}
		var want []string
		if tc.pre {
			want = append(want, protocol.HookPreToolUse)
		}
		if tc.post {
			want = append(want, protocol.HookPostToolUse)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: requests %v, want %v", tc.tool, got, want)
		}
	}
	pw.Close()
}

// TestChildWaitsAtTheTurnBoundary: the child's end sends the boundary up
// and goes on only on the reply with its id, or when its parent is gone.
func TestChildWaitsAtTheTurnBoundary(t *testing.T) {
	upR, upW := io.Pipe()
	downR, downW := io.Pipe()
	l := &parentLink{out: &events{up: protocol.NewWriter(upW)}}
	gone := make(chan struct{})
	go l.read(downR, func() { close(gone) })
	returned := make(chan struct{})
	go func() {
		l.turn(context.Background(), 2)
		close(returned)
	}()
	var req protocol.Turn
	for m, err := range protocol.Read(upR) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(protocol.Turn); ok {
			req = r
			break
		}
	}
	if req.Turn != 2 || !strings.HasPrefix(req.ID, "turn-") || req.Final {
		t.Fatalf("boundary sent up: %+v", req)
	}
	send := func(m protocol.Message) {
		b, _ := protocol.Marshal(m)
		if _, err := downW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	send(protocol.TurnReply{ID: "turn-other"})
	// The pipe hands over the next line only once the reader is done with
	// this one: after this write, the wrong reply has been handled.
	send(protocol.HookReply{ID: "hook-none"})
	select {
	case <-returned:
		t.Fatal("the child went on on a reply to another boundary")
	default:
	}
	send(protocol.TurnReply{ID: req.ID})
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("the child did not go on after its reply")
	}
	// A parent gone: the next boundary does not wait.
	go func() {
		for range protocol.Read(upR) {
		}
	}()
	downW.Close()
	<-gone
	done := make(chan struct{})
	go func() { l.turn(context.Background(), 3); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the child waited for a parent that is gone")
	}
}

// child is a task id for the tests.
const child = "01JABCDEFGHJKMNPQRSTVWXYZ0"

// TestFinalTurnSaysSo: the boundary of an answer that ends the run is
// sent up saying so (Final), and the child does not wait for its reply.
func TestFinalTurnSaysSo(t *testing.T) {
	upR, upW := io.Pipe()
	l := &parentLink{out: &events{up: protocol.NewWriter(upW)}}
	sent := make(chan struct{})
	go func() {
		l.finalTurn(3)
		close(sent)
	}()
	for m, err := range protocol.Read(upR) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(protocol.Turn); ok {
			if r.Turn != 3 || !r.Final || !strings.HasPrefix(r.ID, "turn-") {
				t.Fatalf("final boundary sent up: %+v", r)
			}
			break
		}
	}
	select {
	case <-sent:
	case <-time.After(time.Minute):
		t.Fatal("the child waited at its final answer's boundary")
	}
}
