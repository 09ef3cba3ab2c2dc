package openai

import (
	"encoding/json"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

// TestNoServerSearch: the Chat Completions model offers no server tool; a
// WebSearch spec that reaches it anyway is not sent, and a session that
// searched on Anthropic resumes here without its search blocks (the text
// around them stays).
func TestNoServerSearch(t *testing.T) {
	m, err := New(Config{Model: "gpt-4.1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	if model.OffersServerTool(m, model.ServerToolWebSearch) {
		t.Fatal("the Chat Completions model says it offers web_search")
	}
	req := conversation()
	req.Tools = append(req.Tools, model.ToolSpec{Name: "WebSearch", Server: &model.ServerTool{Kind: model.ServerToolWebSearch}})
	req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, Content: []model.Part{
		{Type: model.PartServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query":"q"}`), Raw: json.RawMessage(`{}`)},
		{Type: model.PartWebSearchResult, ToolUseID: "srvtoolu_1", Text: "T <https://x.example>", Raw: json.RawMessage(`{}`)},
		{Type: model.PartText, Text: "Found it.", Raw: json.RawMessage(`{"type":"text","text":"Found it.","citations":[]}`)},
	}})
	w, _ := sendOne(t, Config{Model: "gpt-4.1", APIKey: "sk-test"}, req)
	if len(w.Tools) != 1 {
		t.Errorf("tools = %s, want Read only", w.Tools)
	}
	if last := string(w.Messages[len(w.Messages)-1]); last != `{"content":"Found it.","role":"assistant"}` {
		t.Errorf("last message = %s", last)
	}
}
