package session

import (
	"encoding/json"
	"strings"
	"testing"
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
