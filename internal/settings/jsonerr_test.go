package settings

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONError(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"trailing comma", "{\n  \"a\": [1,]\n}", "f.json:2:11: invalid character ']'"},
		{"first line", "{x", "f.json:1:2: invalid character 'x'"},
		{"wide characters", "{\"é\": ü}", "f.json:1:7: invalid character"},
		{"wrong type", "{\n \"permissions\": {\"allow\": \"Read\"}}", "f.json:2:32: permissions.allow is a JSON string, it must be a list of strings"},
		{"truncated", "{\"a\": ", "f.json:1:6: unexpected end of JSON input"},
		{"empty", "", "f.json:1:1: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v struct {
				Permissions struct {
					Allow []string `json:"allow"`
				} `json:"permissions"`
			}
			err := json.Unmarshal([]byte(tc.data), &v)
			if err == nil {
				t.Fatal("no error")
			}
			got := JSONError("f.json", []byte(tc.data), err).Error()
			if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, "(fix the file or move it aside)") {
				t.Errorf("JSONError = %q, want it to start %q", got, tc.want)
			}
		})
	}
}
