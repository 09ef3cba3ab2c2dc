package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

// These pin request shapes the real API insists on, which a loopback server
// would accept either way.

func TestEffortByModelGeneration(t *testing.T) {
	cases := []struct {
		model    string
		adaptive bool
	}{
		{"claude-sonnet-4-5", false},
		{"claude-sonnet-4-5-20250929", false},
		{"claude-opus-4-1", false},
		{"claude-3-7-sonnet-latest", false},
		{"claude-sonnet-4-20250514", false},
		{"claude-opus-4-6", true},
		{"claude-opus-4-7", true},
		{"claude-sonnet-5-5", true},
		{"claude-haiku-5-5", true},
		{"some-proxy-model", true},
	}
	for _, c := range cases {
		p, err := buildParams(Config{Model: c.model}, &model.Request{Effort: "high", Messages: []model.Message{model.UserText("hi")}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		body := string(b)
		gotAdaptive := strings.Contains(body, `"type":"adaptive"`) && strings.Contains(body, `"effort":"high"`)
		gotBudget := strings.Contains(body, `"budget_tokens"`)
		if gotAdaptive != c.adaptive || gotBudget == c.adaptive {
			t.Errorf("%s: adaptive %v, budget %v; want adaptive %v\n%s", c.model, gotAdaptive, gotBudget, c.adaptive, body)
		}
	}
}

func TestBlankTextAndRedactedThinking(t *testing.T) {
	req := &model.Request{Messages: []model.Message{
		model.UserText("go"),
		{Role: model.RoleAssistant, Content: []model.Part{
			{Type: model.PartRedactedThinking, Data: "opaque-blob"},
			{Type: model.PartText, Text: "\n\n"},
			{Type: model.PartToolUse, ID: "t1", Name: "Read", Input: json.RawMessage(`{"file_path":"a"}`)},
		}},
		{Role: model.RoleUser, Content: []model.Part{{Type: model.PartToolResult, ToolUseID: "t1", Text: "  \n"}}},
	}}
	p, err := buildParams(Config{Model: "claude-sonnet-5-5"}, req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	body := string(b)
	if strings.Contains(body, `"text":"\n\n"`) || strings.Contains(body, `"text":"  \n"`) {
		t.Errorf("a blank text block is sent (the API refuses it):\n%s", body)
	}
	if !strings.Contains(body, `{"data":"opaque-blob","type":"redacted_thinking"}`) {
		t.Errorf("redacted thinking not sent back:\n%s", body)
	}
}
