package agent_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/tool"
)

// TestAnsweredTurnIsActedOnNotAskedAgain: a run picked up at a model answer
// nothing acted on yet (Config.Answered) runs that answer's tool calls —
// those without a result in Done — then asks the next turn; an answer with
// no tool call ends the run with no request at all.
func TestAnsweredTurnIsActedOnNotAskedAgain(t *testing.T) {
	user := model.Message{Role: model.RoleUser, Content: []model.Part{{Type: model.PartText, Text: "Begin"}}}
	uses := model.Message{Role: model.RoleAssistant, Content: []model.Part{
		{Type: model.PartToolUse, ID: "t1", Name: "Count", Input: json.RawMessage(`{}`)},
		{Type: model.PartToolUse, ID: "t2", Name: "Count", Input: json.RawMessage(`{}`)},
	}}
	final := model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "the answer"}}}
	for _, tc := range []struct {
		name     string
		history  []model.Message
		done     map[string]model.Part
		requests int // model requests of the pick-up
		ran      int32
		text     string
	}{
		{"final answer", []model.Message{user, final}, nil, 0, 0, "the answer"},
		{"tool calls", []model.Message{user, uses}, nil, 1, 2, "next"},
		{"one tool call done", []model.Message{user, uses}, map[string]model.Part{"t1": {Type: model.PartToolResult, ToolUseID: "t1", Text: "kept"}}, 1, 1, "next"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int32
			count := &funcTool{name: "Count", run: func(context.Context, json.RawMessage) tool.Result {
				ran.Add(1)
				return tool.Result{Content: "counted"}
			}}
			m := &fakeModel{turn: func(int, *model.Request) (*model.Response, error) {
				return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "next"}}}}, nil
			}}
			cfg := agent.Config{Name: "root", Model: m, Tools: tool.NewSet(count), Answered: true, Done: tc.done}
			_, out, err := collect(t, t.Context(), cfg, tc.history, "")
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != agent.StatusDone || out.Text != tc.text || ran.Load() != tc.ran || len(m.requests()) != tc.requests {
				t.Fatalf("outcome %q %q, %d tool runs, %d requests; want done %q, %d, %d", out.Status, out.Text, ran.Load(), len(m.requests()), tc.text, tc.ran, tc.requests)
			}
			if tc.requests == 0 {
				return
			}
			// The request carries every tool call's result, in order: the
			// kept one as it was, the others from this run.
			req := m.requests()[0]
			res := toolResults(req.Messages[len(req.Messages)-1])
			if len(res) != 2 || res[0].ToolUseID != "t1" || res[1].ToolUseID != "t2" || (tc.done != nil && res[0].Text != "kept") || res[1].Text != "counted" {
				t.Fatalf("tool results sent %+v", res)
			}
		})
	}
}
