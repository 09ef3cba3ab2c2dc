package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/agent"
)

// TestAPIErrorKeys: a failed model call's result keys as Claude Code
// gives them: an HTTP error's status and type, a refused connection's
// connection_failed, no timings, the turn cap's no api_error_status.
func TestAPIErrorKeys(t *testing.T) {
	tests := []struct {
		status agent.Status
		err    string
		want   []string
		absent []string
	}{
		{agent.StatusFailed, "anthropic: 400 bad request: nope", []string{`"api_error_status":400`, `"api_error_type":"invalid_request_error"`}, []string{`"api_error":`, `"ttft_ms"`}},
		{agent.StatusFailed, "openai: 429 rate limited: slow down", []string{`"api_error_status":429`, `"api_error_type":"rate_limit_error"`}, []string{`"api_error":`}},
		{agent.StatusFailed, "anthropic: server at http://x refused the connection: is it running?", []string{`"api_error_status":null`, `"api_error":"connection_failed"`}, []string{`"api_error_type"`, `"ttft_ms"`}},
		{agent.StatusFailed, "script: no turn", []string{`"api_error_status":null`, `"api_error":"request_failed"`}, nil},
		{agent.StatusPartial, "", []string{`"subtype":"error_max_turns"`}, []string{`"api_error_status"`, `"ttft_ms"`, `"first_content_frame_ms"`}},
		{agent.StatusDone, "", []string{`"api_error_status":null`, `"ttft_ms":0`}, []string{`"api_error"`}},
	}
	for _, tc := range tests {
		r := NewResult(&agent.Outcome{Status: tc.status, Error: tc.err, Turns: 1}, "/p/.brood/sessions/S.jsonl", Totals{}, 0, newSubagentStats(), nil, Timing{})
		b, _ := json.Marshal(r)
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s %q: lacks %s: %s", tc.status, tc.err, w, b)
			}
		}
		for _, w := range tc.absent {
			if strings.Contains(string(b), w) {
				t.Errorf("%s %q: has %s: %s", tc.status, tc.err, w, b)
			}
		}
	}
}
