package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/tool"
)

func TestInjectReachesTheNextTurnAndIsRecorded(t *testing.T) {
	m := scripted(t, `
agents:
  root:
    - tools: [{Echo: {}}]
    - tools: [{Echo: {}}]
    - say: done
`)
	polls := 0
	inject := func() []string {
		polls++
		if polls == 2 {
			return []string{"steer: look at main.go", "notice: task 7 finished"}
		}
		return nil
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tw, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	evs, out, err := collect(t, t.Context(), agent.Config{Name: "root", Model: m, Tools: tool.NewSet(echoTool("Echo")), Transcript: tw, Inject: inject}, nil, "go")
	tw.Close()
	if err != nil || out.Status != agent.StatusDone {
		t.Fatal(err, out.Status)
	}
	if polls != 3 {
		t.Errorf("Inject polled %d times, want once per turn (3)", polls)
	}
	reqs := m.Requests()
	if strings.Contains(fmt.Sprint(reqs[0].Messages), "steer") {
		t.Error("turn 1 saw the steering message")
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != model.RoleUser || len(toolResults(last)) != 1 ||
		!strings.Contains(last.Text(), "steer: look at main.go") || !strings.Contains(last.Text(), "notice: task 7 finished") {
		t.Errorf("turn 2's user message %+v lacks the tool result and both injected texts", last)
	}
	var injected []string
	for _, e := range evs {
		if e.Type == agent.EvInjected {
			injected = append(injected, fmt.Sprint(e.Turn, " ", e.Text))
		}
	}
	if want := []string{"2 steer: look at main.go", "2 notice: task 7 finished"}; !reflect.DeepEqual(injected, want) {
		t.Errorf("injected events %q, want %q", injected, want)
	}
	recs, _, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steers []string
	for _, r := range recs {
		if r.Type == session.RecSteer {
			steers = append(steers, r.Text)
		}
	}
	if len(steers) != 2 {
		t.Errorf("steer records %q", steers)
	}
	if st := session.Replay(recs); !reflect.DeepEqual(st.Messages, out.Messages) {
		t.Error("the transcript does not replay to the run's messages")
	}
}

func TestModelErrorFails(t *testing.T) {
	m := &fakeModel{turn: func(i int, _ *model.Request) (*model.Response, error) {
		if i == 2 {
			return nil, errBoom
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: []model.Part{
			{Type: model.PartText, Text: "working"}, {Type: model.PartToolUse, ID: "u1", Name: "Echo"}}}}, nil
	}}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tw, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := collect(t, t.Context(), agent.Config{Model: m, Tools: tool.NewSet(echoTool("Echo")), Transcript: tw}, nil, "go")
	tw.Close()
	if !errors.Is(err, errBoom) {
		t.Errorf("iterator error %v, want %v", err, errBoom)
	}
	if out.Status != agent.StatusFailed || out.Error != errBoom.Error() || out.Turns != 1 || out.Text != "working" {
		t.Errorf("outcome %+v", out)
	}
	recs, _, _ := session.ReadFile(path)
	end := recs[len(recs)-1]
	if end.Type != session.RecEnd || end.Status != "failed" || end.Text != errBoom.Error() {
		t.Errorf("last record %+v, want end/failed with the error", end)
	}

	// A stream that ends without a response is an error too, and so is no
	// model at all.
	noDone := &fakeModel{turn: func(int, *model.Request) (*model.Response, error) { return nil, model.ErrNoDone }}
	for _, mm := range []model.Model{noDone, nil} {
		_, out, err := collect(t, t.Context(), agent.Config{Model: mm}, nil, "go")
		if err == nil || out.Status != agent.StatusFailed || out.Error == "" {
			t.Errorf("model %v: err %v, outcome %+v", mm, err, out)
		}
	}
}

func TestCancellation(t *testing.T) {
	t.Run("while the model thinks", func(t *testing.T) {
		m := scripted(t, "agents:\n  root:\n    - say: late\n      delay: 1h\n")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var out *agent.Outcome
		for ev, err := range agent.Run(ctx, agent.Config{Name: "root", Model: m}, nil, "go") {
			if err != nil {
				t.Fatalf("cancellation reported as an error: %v", err)
			}
			if ev.Type == agent.EvTurn {
				cancel()
			}
			if ev.Outcome != nil {
				out = ev.Outcome
			}
		}
		if out == nil || out.Status != agent.StatusCancelled || out.Turns != 0 || !strings.Contains(out.Error, "canceled") {
			t.Fatalf("outcome %+v", out)
		}
	})
	t.Run("while a tool runs", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		block := &funcTool{name: "Block", run: func(ctx context.Context, _ json.RawMessage) tool.Result {
			cancel()
			<-ctx.Done()
			return tool.Errorf("stopped: %v", ctx.Err())
		}}
		m := scripted(t, "agents:\n  root:\n    - tools: [{Block: {}}]\n    - say: never\n")
		path := filepath.Join(t.TempDir(), "s.jsonl")
		tw, err := session.Open(path, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, out, err := collect(t, ctx, agent.Config{Name: "root", Model: m, Tools: tool.NewSet(block), Transcript: tw}, nil, "go")
		tw.Close()
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != agent.StatusCancelled || out.Turns != 1 {
			t.Fatalf("outcome %+v", out)
		}
		if n := len(m.Requests()); n != 1 {
			t.Errorf("model called %d times after cancellation", n)
		}
		// The interrupted call's result is kept, so the run can be resumed.
		checkAnswered(t, out.Messages)
		recs, _, _ := session.ReadFile(path)
		st := session.Replay(recs)
		if st.Status != "cancelled" || !reflect.DeepEqual(st.Messages, out.Messages) {
			t.Errorf("replay: status %q, %d messages", st.Status, len(st.Messages))
		}
	})
	t.Run("before the first turn", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		m := scripted(t, "agents:\n  root:\n    - say: never\n")
		_, out, _ := collect(t, ctx, agent.Config{Name: "root", Model: m}, nil, "go")
		if out.Status != agent.StatusCancelled || len(m.Requests()) != 0 {
			t.Fatalf("outcome %+v after %d requests", out, len(m.Requests()))
		}
	})
}

func TestTranscriptRecordsTheRun(t *testing.T) {
	m := scripted(t, `
agents:
  root:
    - say: "(the history's turn)"
    - say: "calling"
      tools: [{Echo: {a: 1}}, {Echo: {b: 2}}]
    - say: "answer"
`)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tw, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	history := []model.Message{model.UserText("earlier"), {Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "earlier answer"}}}}
	_, out, err := collect(t, t.Context(), agent.Config{Name: "root", Model: m, System: "be brief", Tools: tool.NewSet(echoTool("Echo")), Transcript: tw}, history, "now this")
	tw.Close()
	if err != nil || out.Status != agent.StatusDone {
		t.Fatal(err, out)
	}
	recs, bad, err := session.ReadFile(path)
	if err != nil || bad != 0 {
		t.Fatal(err, bad)
	}
	var got []string
	for _, r := range recs {
		s := string(r.Type)
		switch r.Type {
		case session.RecMessage:
			s += ":" + string(r.Message.Role)
		case session.RecToolCall, session.RecToolResult:
			s += ":" + r.Tool
		case session.RecEnd:
			s += ":" + r.Status
		}
		got = append(got, fmt.Sprint(s, "@", r.Turn))
	}
	want := []string{
		"meta@0", "message:user@1", "message:assistant@1", "usage@1",
		"tool_call:Echo@1", "tool_call:Echo@1", "tool_result:Echo@1", "tool_result:Echo@1",
		"message:user@2", "message:assistant@2", "usage@2", "end:done@2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records\n got %v\nwant %v", got, want)
	}
	if recs[0].Agent != "root" || recs[0].Model != "script:test" || recs[0].System != "be brief" {
		t.Errorf("meta %+v", recs[0])
	}
	if string(recs[4].Input) != `{"a":1}` || recs[4].ToolID == "" {
		t.Errorf("tool call record %+v", recs[4])
	}
	outputs := map[string]string{recs[6].ToolID: recs[6].Output, recs[7].ToolID: recs[7].Output}
	if outputs[recs[4].ToolID] != `Echo {"a":1}` || outputs[recs[5].ToolID] != `Echo {"b":2}` {
		t.Errorf("tool results %v", outputs)
	}
	var sum model.Usage
	for _, r := range recs {
		if r.Type == session.RecUsage {
			sum = sum.Add(*r.Usage)
		}
	}
	if sum != out.Usage || sum.Total() == 0 {
		t.Errorf("recorded usage %+v, outcome %+v", sum, out.Usage)
	}
	// The history is not re-recorded, but continuing from it works: the
	// transcript holds the new part of the conversation.
	st := session.Replay(recs)
	if !reflect.DeepEqual(append(append([]model.Message(nil), history...), st.Messages...), out.Messages) {
		t.Error("history + replay differs from the run's messages")
	}
}

// envTool is a tool that reads the Env it is handed.
type envTool struct {
	funcTool
	runEnv func(env *tool.Env) tool.Result
}

func (e *envTool) Run(_ context.Context, env *tool.Env, _ json.RawMessage) tool.Result {
	return e.runEnv(env)
}

// TestHistoryAndCallIDInsideATool: every call of a turn gets the Env with
// its own call id and the conversation up to the calling message.
func TestHistoryAndCallIDInsideATool(t *testing.T) {
	type seen struct {
		id   string
		hist []model.Message
	}
	ch := make(chan seen, 2)
	spy := &envTool{funcTool{name: "Spy"}, func(env *tool.Env) tool.Result {
		ch <- seen{env.CallID(), env.History()}
		return tool.Result{Content: "ok"}
	}}
	m := scripted(t, "agents:\n  root:\n    - say: spying\n      tools: [{Spy: {}}, {Spy: {}}]\n    - say: done\n")
	_, out, err := collect(t, t.Context(), agent.Config{Name: "root", Model: m, Tools: tool.NewSet(spy)}, nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	uses := out.Messages[1].ToolUses()
	ids := map[string]bool{}
	for range 2 {
		s := <-ch
		ids[s.id] = true
		if len(s.hist) != 2 || s.hist[1].Role != model.RoleAssistant || !reflect.DeepEqual(s.hist[1], out.Messages[1]) {
			t.Errorf("History in the tool = %+v, want the conversation up to the calling message", s.hist)
		}
	}
	if !ids[uses[0].ID] || !ids[uses[1].ID] {
		t.Errorf("CallID values %v, want %s and %s", ids, uses[0].ID, uses[1].ID)
	}
	if env := (&tool.Env{}); env.CallID() != "" || env.History() != nil {
		t.Error("CallID/History of an Env made for no call are not empty")
	}
}

func TestToolFailuresGoBackToTheModel(t *testing.T) {
	m := scripted(t, "agents:\n  root:\n    - tools: [{Nope: {}}]\n    - say: \"{{result 0}}\"\n")
	for _, tools := range []*tool.Set{nil, tool.NewSet(echoTool("Echo"))} {
		_, out, err := collect(t, t.Context(), agent.Config{Name: "root", Model: m, Tools: tools}, nil, "go")
		if err != nil || out.Status != agent.StatusDone {
			t.Fatal(err, out.Status)
		}
		r := toolResults(out.Messages[2])
		if len(r) != 1 || !r[0].IsError || !strings.Contains(out.Text, "Nope") {
			t.Errorf("tools %v: result %+v, answer %q", tools, r, out.Text)
		}
		m = scripted(t, "agents:\n  root:\n    - tools: [{Nope: {}}]\n    - say: \"{{result 0}}\"\n")
	}
}

func TestConsumerMayStopEarly(t *testing.T) {
	m := scripted(t, "agents:\n  root:\n    - tools: [{Echo: {}}]\n    - say: done\n")
	n := 0
	for ev, err := range agent.Run(t.Context(), agent.Config{Name: "root", Model: m, Tools: tool.NewSet(echoTool("Echo"))}, nil, "go") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ev.Type == agent.EvToolCall {
			break
		}
	}
	if len(m.Requests()) != 1 {
		t.Errorf("the loop went on after the consumer stopped: %d requests", len(m.Requests()))
	}
}
