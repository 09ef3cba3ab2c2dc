package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/tool"
)

// TestAnsweredTurnIsActedOnNotAskedAgain: a run picked up at a model answer
// nothing acted on yet (Config.Answered) acts on that answer's tool calls —
// those without a result in Done — then asks the next turn; an answer with
// no tool call ends the run with no request at all. Of those calls, only a
// read-only tool's runs again: another (a Bash `git push`, a Task
// dispatch, a SendMessage, any MCP call) may have run before the process
// died, so it gets session.Interrupted and the model decides (security
// review, finding 2).
func TestAnsweredTurnIsActedOnNotAskedAgain(t *testing.T) {
	user := model.Message{Role: model.RoleUser, Content: []model.Part{{Type: model.PartText, Text: "Begin"}}}
	call := func(id, name string) model.Part {
		return model.Part{Type: model.PartToolUse, ID: id, Name: name, Input: json.RawMessage(`{}`)}
	}
	answer := func(parts ...model.Part) model.Message {
		return model.Message{Role: model.RoleAssistant, Content: parts}
	}
	final := answer(model.Part{Type: model.PartText, Text: "the answer"})
	kept := map[string]model.Part{"t1": {Type: model.PartToolResult, ToolUseID: "t1", Text: "kept"}}
	for _, tc := range []struct {
		name     string
		history  []model.Message
		done     map[string]model.Part
		requests int // model requests of the pick-up
		counted  int32
		pushed   int32
		results  []string // the tool results sent, in order
	}{
		{"final answer", []model.Message{user, final}, nil, 0, 0, 0, nil},
		{"read-only calls", []model.Message{user, answer(call("t1", "Count"), call("t2", "Count"))}, nil, 1, 2, 0, []string{"counted", "counted"}},
		{"one read-only call done", []model.Message{user, answer(call("t1", "Count"), call("t2", "Count"))}, kept, 1, 1, 0, []string{"kept", "counted"}},
		{"a writing call", []model.Message{user, answer(call("t1", "Count"), call("t2", "Push"))}, nil, 1, 1, 0, []string{"counted", session.Interrupted}},
		{"a writing call, the other done", []model.Message{user, answer(call("t1", "Push"), call("t2", "Push"))}, kept, 1, 0, 0, []string{"kept", session.Interrupted}},
		{"an unknown tool", []model.Message{user, answer(call("t1", "Count"), call("t2", "Gone"))}, nil, 1, 1, 0, []string{"counted", session.Interrupted}},
		{"a read-only call not to repeat", []model.Message{user, answer(call("t1", "Count"), call("t2", "Send"))}, nil, 1, 1, 0, []string{"counted", session.Interrupted}},
		{"a read-only MCP call", []model.Message{user, answer(call("t1", "mcp__srv__count"), call("t2", "Count"))}, nil, 1, 1, 0, []string{session.Interrupted, "counted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counted, pushed atomic.Int32
			count := &funcTool{name: "Count", run: func(context.Context, json.RawMessage) tool.Result {
				counted.Add(1)
				return tool.Result{Content: "counted"}
			}}
			push := writerTool{&funcTool{name: "Push", run: func(context.Context, json.RawMessage) tool.Result {
				pushed.Add(1)
				return tool.Result{Content: "pushed"}
			}}}
			m := &fakeModel{turn: func(int, *model.Request) (*model.Response, error) {
				return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "next"}}}}, nil
			}}
			// Send (as SendMessage) and an MCP tool its server marks
			// read-only are read-only, but not safe to run twice: their
			// runs count as pushes.
			send := onceTool{&funcTool{name: "Send", run: push.run}}
			mcp := &funcTool{name: "mcp__srv__count", run: push.run}
			cfg := agent.Config{Name: "root", Model: m, Tools: tool.NewSet(count, push, send, mcp), Answered: true, Done: tc.done}
			_, out, err := collect(t, t.Context(), cfg, tc.history, "")
			if err != nil {
				t.Fatal(err)
			}
			text := "next"
			if tc.requests == 0 {
				text = "the answer"
			}
			if out.Status != agent.StatusDone || out.Text != text || counted.Load() != tc.counted || pushed.Load() != tc.pushed || len(m.requests()) != tc.requests {
				t.Fatalf("outcome %q %q, %d counts, %d pushes, %d requests; want done %q, %d, %d, %d",
					out.Status, out.Text, counted.Load(), pushed.Load(), len(m.requests()), text, tc.counted, tc.pushed, tc.requests)
			}
			if tc.requests == 0 {
				return
			}
			// The request carries every tool call's result, in order.
			req := m.requests()[0]
			res := toolResults(req.Messages[len(req.Messages)-1])
			if len(res) != len(tc.results) {
				t.Fatalf("tool results sent %+v, want %q", res, tc.results)
			}
			for i, want := range tc.results {
				if res[i].ToolUseID != fmt.Sprintf("t%d", i+1) || res[i].Text != want || res[i].IsError != (want == session.Interrupted) {
					t.Errorf("result %d = %+v, want %q", i, res[i], want)
				}
			}
		})
	}
}

// writerTool is a funcTool that is not read-only.
type writerTool struct{ *funcTool }

func (writerTool) ReadOnly() bool { return false }

// onceTool is a read-only funcTool that is not safe to run twice.
type onceTool struct{ *funcTool }

func (onceTool) Rerunnable() bool { return false }
