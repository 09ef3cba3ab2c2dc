package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/tool"
)

func TestStopsWhenTheModelAnswersWithoutATool(t *testing.T) {
	m := scripted(t, `
agents:
  root:
    - say: "first I look"
      tools: [{Echo: {x: 1}}]
    - say: "all done"
    - say: "never reached"
`)
	evs, out, err := collect(t, t.Context(), agent.Config{Name: "root", Model: m, Tools: tool.NewSet(echoTool("Echo"))}, nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusDone || out.Text != "all done" || out.Turns != 2 || out.Error != "" {
		t.Fatalf("outcome %+v", out)
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("model called %d times, want 2", n)
	}
	if count(evs, agent.EvTurn) != 2 || count(evs, agent.EvToolCall) != 1 || count(evs, agent.EvToolResult) != 1 {
		t.Errorf("events: %d turns, %d calls, %d results", count(evs, agent.EvTurn), count(evs, agent.EvToolCall), count(evs, agent.EvToolResult))
	}
	var streamed strings.Builder
	for _, e := range evs {
		if e.Type == agent.EvText {
			streamed.WriteString(e.Text)
		}
	}
	if streamed.String() != "first I lookall done" {
		t.Errorf("streamed text %q", streamed.String())
	}
	if len(out.Messages) != 4 {
		t.Fatalf("%d messages, want user, assistant, results, assistant", len(out.Messages))
	}
	if r := toolResults(out.Messages[2]); len(r) != 1 || r[0].Text != `Echo {"x":1}` {
		t.Errorf("tool result %+v", r)
	}
}

// rendezvous returns a tool that signals mine and then waits for other: two
// such tools finish only if they run at the same time.
func rendezvous(name string, mine, other chan struct{}) *funcTool {
	return &funcTool{name: name, run: func(ctx context.Context, _ json.RawMessage) tool.Result {
		close(mine)
		select {
		case <-other:
			return tool.Result{Content: "result of " + name}
		case <-time.After(10 * time.Second):
			return tool.Errorf("%s waited alone: tools did not run concurrently", name)
		}
	}}
}

func TestToolCallsOfOneTurnRunConcurrentlyAndKeepOrder(t *testing.T) {
	a, b := make(chan struct{}), make(chan struct{})
	tools := tool.NewSet(rendezvous("A", a, b), rendezvous("B", b, a), echoTool("C"))
	m := scripted(t, `
agents:
  "*":
    - tools: [{B: {}}, {C: {n: 3}}, {A: {}}]
    - say: "{{result 0}} | {{result 1}} | {{result 2}}"
`)
	evs, out, err := collect(t, t.Context(), agent.Config{Name: "x", Model: m, Tools: tools}, nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	want := `result of B | C {"n":3} | result of A`
	if out.Text != want {
		t.Fatalf("answer %q, want %q", out.Text, want)
	}
	uses := out.Messages[1].ToolUses()
	res := toolResults(out.Messages[2])
	for i := range uses {
		if res[i].ToolUseID != uses[i].ID || res[i].IsError {
			t.Errorf("result %d answers %s (error %v), want %s", i, res[i].ToolUseID, res[i].IsError, uses[i].ID)
		}
	}
	// Every call is announced before any result comes back.
	var order []agent.EventType
	for _, e := range evs {
		if e.Type == agent.EvToolCall || e.Type == agent.EvToolResult {
			order = append(order, e.Type)
		}
	}
	if fmt.Sprint(order) != "[tool_call tool_call tool_call tool_result tool_result tool_result]" {
		t.Errorf("event order %v", order)
	}
}

func loopScript(n int) string {
	var b strings.Builder
	b.WriteString("agents:\n  root:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "    - say: \"turn %d\"\n      tools: [{Echo: {i: %d}}, {Echo: {j: %d}}]\n", i, i, i)
	}
	return b.String()
}

func TestWrapUpNoticeAndTurnCap(t *testing.T) {
	tests := []struct {
		max      int
		noticeAt int // 0: never
	}{
		{max: 5, noticeAt: 4},
		{max: 3, noticeAt: 2},
		{max: 2, noticeAt: 0},
		{max: 1, noticeAt: 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("max", tc.max), func(t *testing.T) {
			m := scripted(t, loopScript(tc.max+3))
			path := filepath.Join(t.TempDir(), "s.jsonl")
			tw, err := session.Open(path, session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, out, err := collect(t, t.Context(), agent.Config{Name: "root", Model: m, Tools: tool.NewSet(echoTool("Echo")), MaxTurns: tc.max, Transcript: tw}, nil, "go")
			tw.Close()
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != agent.StatusPartial || out.Turns != tc.max {
				t.Fatalf("status %s after %d turns, want partial after %d", out.Status, out.Turns, tc.max)
			}
			if want := fmt.Sprintf("turn %d", tc.max); out.Text != want {
				t.Errorf("partial text %q, want the latest answer %q", out.Text, want)
			}
			reqs := m.Requests()
			if len(reqs) != tc.max {
				t.Fatalf("model called %d times, want %d", len(reqs), tc.max)
			}
			for i, r := range reqs {
				last := r.Messages[len(r.Messages)-1]
				has := strings.Contains(last.Text(), "Wrap up now")
				if want := i+1 == tc.noticeAt; has != want {
					t.Errorf("turn %d: wrap-up notice present = %v, want %v", i+1, has, want)
				}
				if has && !strings.Contains(last.Text(), fmt.Sprintf("turn %d of %d", tc.noticeAt, tc.max)) {
					t.Errorf("notice does not name the turn: %q", last.Text())
				}
			}
			// Every tool call is answered, the capped ones as not run.
			checkAnswered(t, out.Messages)
			final := out.Messages[len(out.Messages)-1]
			res := toolResults(final)
			if final.Role != model.RoleUser || len(res) != 2 {
				t.Fatalf("last message %+v, want the results of the capped calls", final)
			}
			for _, p := range res {
				if !p.IsError || !strings.Contains(p.Text, "turn cap") {
					t.Errorf("capped call result %+v", p)
				}
			}
			// The transcript replays to the same, valid conversation.
			recs, bad, err := session.ReadFile(path)
			if err != nil || bad != 0 {
				t.Fatal(err, bad)
			}
			st := session.Replay(recs)
			if !reflect.DeepEqual(st.Messages, out.Messages) || st.Status != "partial" || st.Turns != tc.max {
				t.Errorf("replay differs from the run: status %q turns %d", st.Status, st.Turns)
			}
		})
	}
}

func TestUsageAddsUpPerTurn(t *testing.T) {
	per := []model.Usage{
		{Input: 100, Output: 10, CacheRead: 5, CacheWrite: 50},
		{Input: 200, Output: 20, CacheRead: 7, CacheWrite: 0},
		{Input: 300, Output: 30, CacheRead: 0, CacheWrite: 9},
	}
	m := &fakeModel{turn: func(i int, _ *model.Request) (*model.Response, error) {
		msg := model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "t"}}}
		if i < 3 {
			msg.Content = append(msg.Content, model.Part{Type: model.PartToolUse, ID: fmt.Sprint("u", i), Name: "Echo"})
		}
		return &model.Response{Message: msg, Usage: per[i-1]}, nil
	}}
	evs, out, err := collect(t, t.Context(), agent.Config{Model: m, Tools: tool.NewSet(echoTool("Echo"))}, nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	want := model.Usage{Input: 600, Output: 60, CacheRead: 12, CacheWrite: 59}
	if out.Usage != want {
		t.Errorf("total %+v, want %+v", out.Usage, want)
	}
	var running model.Usage
	i := 0
	for _, e := range evs {
		if e.Type != agent.EvUsage {
			continue
		}
		running = running.Add(per[i])
		if *e.Usage != per[i] || *e.Total != running || e.Turn != i+1 {
			t.Errorf("usage event %d: %+v total %+v turn %d", i, *e.Usage, *e.Total, e.Turn)
		}
		// Final: only the answer with no tool call, which ends the run.
		if e.Final != (i == 2) {
			t.Errorf("usage event %d: final %v, want %v", i, e.Final, i == 2)
		}
		i++
	}
	if i != 3 {
		t.Errorf("%d usage events, want 3", i)
	}
}

func TestTokenBudgetWarnsOnceAndNeverStops(t *testing.T) {
	// 30 tokens a turn against a budget of 100: 80% is crossed at turn 3
	// (90), 100% at turn 4 (120); the run goes on to turn 6.
	m := &fakeModel{turn: func(i int, _ *model.Request) (*model.Response, error) {
		msg := model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "t"}}}
		if i < 6 {
			msg.Content = append(msg.Content, model.Part{Type: model.PartToolUse, ID: fmt.Sprint("u", i), Name: "Echo"})
		}
		return &model.Response{Message: msg, Usage: model.Usage{Input: 20, Output: 10}}, nil
	}}
	tests := []struct {
		budget           int64
		warnAt, exceedAt int
	}{
		{budget: 100, warnAt: 3, exceedAt: 4},
		{budget: 75, warnAt: 2, exceedAt: 3},   // 60 >= 60
		{budget: 60, warnAt: 2, exceedAt: 2},   // both at once
		{budget: 1000, warnAt: 0, exceedAt: 0}, // never
		{budget: 0, warnAt: 0, exceedAt: 0},    // no budget
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.budget), func(t *testing.T) {
			m.reqs = nil
			evs, out, err := collect(t, t.Context(), agent.Config{Model: m, Tools: tool.NewSet(echoTool("Echo")), TokenBudget: tc.budget}, nil, "go")
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != agent.StatusDone || out.Turns != 6 {
				t.Fatalf("the budget changed the run: %s after %d turns", out.Status, out.Turns)
			}
			check := func(typ agent.EventType, at int) {
				var turns []int
				for _, e := range evs {
					if e.Type == typ {
						turns = append(turns, e.Turn)
					}
				}
				want := []int{at}
				if at == 0 {
					want = nil
				}
				if !reflect.DeepEqual(turns, want) {
					t.Errorf("%s at turns %v, want %v", typ, turns, want)
				}
			}
			check(agent.EvBudgetWarning, tc.warnAt)
			check(agent.EvBudgetExceeded, tc.exceedAt)
		})
	}
}
