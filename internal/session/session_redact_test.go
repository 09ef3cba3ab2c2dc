package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

func TestRedactJSONFindsEscapedSecrets(t *testing.T) {
	secret := `s3"cr\et`
	f := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	in, _ := json.Marshal(map[string]any{"command": "curl -H 'x: " + secret + "'", "n": 1})
	out := redactJSON(in, f)
	if strings.Contains(string(out), `s3\"cr\\et`) || !strings.Contains(string(out), "[REDACTED]") {
		t.Fatalf("escaped secret survived: %s", out)
	}
	clean := json.RawMessage(`{"b":1,"a":"x"}`)
	if got := redactJSON(clean, f); string(got) != string(clean) {
		t.Fatalf("unchanged input re-encoded: %s", got)
	}
}

// TestRedactServerBlocks: a provider's blocks kept verbatim (Part.Raw: a
// web search's query and results, cited text) reach the transcript
// redacted; a clean block is kept byte for byte (it goes back to the
// provider), and cited text with a secret loses its block (it goes back
// as plain, redacted text).
func TestRedactServerBlocks(t *testing.T) {
	f := func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") }
	clean := json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`)
	r := redactRecord(Record{Type: RecMessage, Message: &model.Message{Role: model.RoleAssistant, Content: []model.Part{
		{Type: model.PartServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query":"hunter2"}`), Raw: json.RawMessage(`{"type":"server_tool_use","input":{"query":"hunter2"}}`)},
		{Type: model.PartWebSearchResult, ToolUseID: "srvtoolu_1", Raw: clean},
		{Type: model.PartText, Text: "pw hunter2", Raw: json.RawMessage(`{"type":"text","text":"pw hunter2","citations":[]}`)},
	}}}, f)
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("a secret reached the transcript: %s", b)
	}
	if c := r.Message.Content; string(c[1].Raw) != string(clean) || c[2].Raw != nil || c[2].Text != "pw [REDACTED]" {
		t.Errorf("parts after redaction: %+v", c)
	}
}
