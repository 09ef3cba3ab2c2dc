package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRedactingWriter: every string of a message leaving through a
// redacting writer is redacted, however JSON quoted it; the message still
// decodes to the same kind.
func TestRedactingWriter(t *testing.T) {
	secret := `hunter2<&>"x"`
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED:.env:PW]") }
	for _, m := range []Message{
		Hook{ID: "hook-1", Event: HookPostToolUse, Tool: "Read", Input: json.RawMessage(`{"file_path":".env"}`), Response: &ToolResponse{Content: "PW=" + secret}},
		Hook{ID: "hook-2", Event: HookPreToolUse, Tool: "Bash", Input: mustJSON(t, map[string]string{"command": "curl -u admin:" + secret})},
		Ask{ID: "ask-1", Tool: "Bash", Subject: "echo " + secret},
		BudgetWarning{Text: secret},
	} {
		var plain, red bytes.Buffer
		if err := NewWriter(&plain).Send(m); err != nil {
			t.Fatal(err)
		}
		if err := NewRedactingWriter(&red, redact).Send(m); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(plain.Bytes(), red.Bytes()) {
			t.Errorf("%s: not redacted: %s", m.Kind(), red.Bytes())
		}
		back, err := Unmarshal(bytes.TrimSpace(red.Bytes()))
		if err != nil || back.Kind() != m.Kind() {
			t.Fatalf("%s: %v", red.Bytes(), err)
		}
		b, _ := json.Marshal(back)
		if strings.Contains(string(b), "hunter2") || !strings.Contains(red.String(), "[REDACTED:.env:PW]") {
			t.Errorf("%s: %s", m.Kind(), red.Bytes())
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
