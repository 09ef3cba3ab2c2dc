package fakewire

import (
	"encoding/json"
	"fmt"
	"net/http"

	broodmodel "github.com/broodhq/brood/internal/model"
)

// WriteAnthropic writes r as an Anthropic Messages response: the n-th
// (ids are numbered by it) to a request for model.
func WriteAnthropic(w http.ResponseWriter, n int, model string, r Reply) {
	if r.Status != 0 && r.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", fmt.Sprintf("req_%03d", n))
		if r.RetryAfter != "" {
			w.Header().Set("retry-after", r.RetryAfter)
		}
		w.WriteHeader(r.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"type":       "error",
			"error":      map[string]any{"type": broodmodel.AnthropicErrorType(r.Status), "message": errorMessage(r)},
			"request_id": fmt.Sprintf("req_%03d", n),
		})
		return
	}
	s := startSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%03d", n), "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens":                r.Usage.Input,
			"cache_creation_input_tokens": r.Usage.CacheWrite,
			"cache_read_input_tokens":     r.Usage.CacheRead,
			"output_tokens":               1,
		},
	}})
	faultDone := false
	// fault fires the injected fault once, at the first point that has sent
	// something the consumer may have shown; it reports whether to stop.
	fault := func() bool {
		if faultDone || r.Fault == NoFault {
			return false
		}
		faultDone = true
		switch r.Fault {
		case Malformed:
			s.event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`)
			return true
		case Reset:
			reset(w)
			return true
		case Truncate:
			return true
		case ErrorEvent:
			s.event("error", map[string]any{"type": "error",
				"error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
			return true
		}
		return false
	}
	index := 0
	if r.Thinking != "" || r.Signature != "" {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		for _, p := range words(r.Thinking) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "thinking_delta", "thinking": p}})
		}
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "signature_delta", "signature": r.Signature}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if r.Text != "" {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.event("ping", map[string]any{"type": "ping"})
		for _, p := range words(r.Text) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": p}})
			if fault() {
				return
			}
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if fault() {
		return
	}
	if r.Search != nil {
		index = writeSearch(s, index, r.Search)
	}
	for _, tc := range r.ToolCalls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
		for _, p := range pieces(tc.Input) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := r.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(r.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	usage := map[string]any{"output_tokens": r.Usage.Output}
	if r.Search != nil || r.Usage.WebSearches > 0 {
		usage["server_tool_use"] = map[string]any{"web_search_requests": max(r.Usage.WebSearches, 1), "web_fetch_requests": 0}
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}
