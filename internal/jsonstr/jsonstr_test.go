package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
)

func redactPW(s string) string { return strings.ReplaceAll(s, `p<a"ss\w&rd`, "[REDACTED]") }

func TestMap(t *testing.T) {
	secret := `p<a"ss\w&rd`
	enc, _ := json.Marshal(map[string]any{"tool_response": map[string]any{"content": "DB=" + secret + "\n"}, "n": 1.50})
	for _, tc := range []struct{ name, in, want string }{
		{"plain string", `{"a":"x p<a\"ss\\w&rd y"}`, `{"a":"x [REDACTED] y"}`},
		{"escaped as encoding/json does", string(enc), `{"n":1.5,"tool_response":{"content":"DB=[REDACTED]\n"}}`},
		{"unicode escapes", `{"a":"p\u003ca\"ss\\w\u0026rd"}`, `{"a":"[REDACTED]"}`},
		{"layout, numbers and order kept", "{\n  \"z\": 1.50e0,\n  \"a\": [\"p<a\\\"ss\\\\w&rd\", true]\n}", "{\n  \"z\": 1.50e0,\n  \"a\": [\"[REDACTED]\", true]\n}"},
		{"key", `{"p<a\"ss\\w&rd":1}`, `{"[REDACTED]":1}`},
		{"a JSON document inside a string", `{"text":"{\"summary\":\"p<a\\\"ss\\\\w&rd\"}"}`, `{"text":"{\"summary\":\"[REDACTED]\"}"}`},
		{"nothing to change", `{"a":"b","c":[1,2]}`, `{"a":"b","c":[1,2]}`},
		{"unterminated", `{"a":"p<a\"ss\\w&rd`, `{"a":"p<a\"ss\\w&rd`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(Map([]byte(tc.in), redactPW))
			if got != tc.want {
				t.Errorf("Map(%s)\n = %s\nwant %s", tc.in, got, tc.want)
			}
			if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
				t.Errorf("invalid JSON out: %s", got)
			}
			if strings.Contains(got, secret) {
				t.Errorf("secret left: %s", got)
			}
		})
	}
	if !strings.Contains(string(enc), `\u003c`) {
		t.Fatalf("the test's premise: encoding/json escapes < (%s)", enc)
	}
}

func TestMapUnchangedIsSameSlice(t *testing.T) {
	b := []byte(`{"a":"b"}`)
	if got := Map(b, redactPW); &got[0] != &b[0] {
		t.Error("an unchanged document was copied")
	}
	if got := Map(b, nil); &got[0] != &b[0] {
		t.Error("a nil function copied the document")
	}
}
