package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/tool"
)

// TestCutOffReplyRunsNoTool: a reply that hit max_tokens has incomplete
// tool inputs; the tools are not run, and the model is told why.
func TestCutOffReplyRunsNoTool(t *testing.T) {
	var ran atomic.Int32
	w := &funcTool{name: "Write", run: func(context.Context, json.RawMessage) tool.Result {
		ran.Add(1)
		return tool.Result{Content: "written"}
	}}
	m := &fakeModel{turn: func(i int, req *model.Request) (*model.Response, error) {
		if i == 1 {
			return &model.Response{StopReason: "max_tokens", Message: model.Message{Role: model.RoleAssistant, Content: []model.Part{
				{Type: model.PartToolUse, ID: "t1", Name: "Write", Input: json.RawMessage(`{}`)},
			}}}, nil
		}
		return &model.Response{StopReason: "end_turn", Message: model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "ok"}}}}, nil
	}}
	_, out, err := collect(t, context.Background(), agent.Config{Model: m, Tools: tool.NewSet(w)}, nil, "write it")
	if err != nil || out.Status != agent.StatusDone {
		t.Fatalf("status %v, err %v", out.Status, err)
	}
	if ran.Load() != 0 {
		t.Fatal("a tool call from a cut-off reply was run")
	}
	last := m.requests()[1].Messages
	res := last[len(last)-1].Content[0]
	if res.Type != model.PartToolResult || !res.IsError || !strings.Contains(res.Text, "max_tokens") {
		t.Fatalf("the model was not told: %+v", res)
	}
}
