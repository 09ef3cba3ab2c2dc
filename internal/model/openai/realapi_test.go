package openai

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"

	"github.com/broodhq/brood/internal/model"
)

func TestReasoningEffortRules(t *testing.T) {
	tools := []model.ToolSpec{{Name: "Read", Schema: json.RawMessage(`{"type":"object"}`)}}
	cases := []struct {
		model     string
		tools     bool
		wantReaso bool
	}{
		{"gpt-5", true, true},
		{"gpt-5.2", true, true},
		{"gpt-5.4", true, false}, // refused next to function tools
		{"gpt-5.4", false, true},
		{"gpt-6-mini", true, false},
		{"gpt-5-chat-latest", false, false},
		{"o3", true, true},
		{"qwen3", true, false},
	}
	for _, c := range cases {
		req := &model.Request{Effort: "high", Messages: []model.Message{model.UserText("hi")}}
		if c.tools {
			req.Tools = tools
		}
		p, err := buildParams(Config{Model: c.model, BaseURL: "https://api.openai.com/v1"}, req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		if got := strings.Contains(string(b), `"reasoning_effort"`); got != c.wantReaso {
			t.Errorf("%s tools=%v: reasoning_effort sent %v, want %v", c.model, c.tools, got, c.wantReaso)
		}
		if c.model != "qwen3" && strings.Contains(string(b), `"max_tokens"`) {
			t.Errorf("%s on api.openai.com got max_tokens: %s", c.model, b)
		}
	}
}

// TestParallelCallsUnderOneIndex: Ollama streams every parallel call as
// index 0; each must stay a call of its own.
func TestParallelCallsUnderOneIndex(t *testing.T) {
	var a accumulator
	chunk := func(id, name, args string) *sdk.ChatCompletionChunk {
		var c sdk.ChatCompletionChunk
		raw := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"` + id + `","function":{"name":"` + name + `","arguments":` + args + `}}]}}]}`
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	a.add(chunk("call_a", "Read", `"{\"file_path\":\"a.go\"}"`))
	a.add(chunk("call_b", "Read", `"{\"file_path\":\"b.go\"}"`))
	uses := a.response().Message.ToolUses()
	if len(uses) != 2 || uses[0].ID != "call_a" || uses[1].ID != "call_b" || string(uses[1].Input) != `{"file_path":"b.go"}` {
		t.Fatalf("calls: %+v", uses)
	}
}
