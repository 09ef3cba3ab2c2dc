package fakewire

import (
	"encoding/json"
	"fmt"
	"net/http"
)

func openAIErrorType(status int) (typ, code string) {
	switch status {
	case 401:
		return "invalid_request_error", "invalid_api_key"
	case 404:
		return "invalid_request_error", "model_not_found"
	case 429:
		return "requests", "rate_limit_exceeded"
	case 400:
		return "invalid_request_error", ""
	}
	return "server_error", ""
}

// WriteOpenAI writes r as an OpenAI Chat Completions response: the n-th
// (ids are numbered by it) to a request for model. Thinking is not sent:
// Chat Completions has no such block.
func WriteOpenAI(w http.ResponseWriter, n int, model string, r Reply) {
	if r.Status != 0 && r.Status != http.StatusOK {
		typ, code := openAIErrorType(r.Status)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-request-id", fmt.Sprintf("req_%03d", n))
		if r.RetryAfter != "" {
			w.Header().Set("retry-after", r.RetryAfter)
		}
		w.WriteHeader(r.Status)
		var c any
		if code != "" {
			c = code
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": errorMessage(r), "type": typ, "param": nil, "code": c,
		}})
		return
	}
	id, mdl := fmt.Sprintf("chatcmpl-%03d", n), model
	s := startSSE(w)
	chunk := func(choices []any, usage any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000,
			"model": mdl, "system_fingerprint": "fp_modeltest", "choices": choices, "usage": usage}
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}
	s.event("", chunk(choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil))
	faultDone := false
	fault := func() bool {
		if faultDone || r.Fault == NoFault {
			return false
		}
		faultDone = true
		switch r.Fault {
		case Malformed:
			s.event("", `{"id":"`+id+`","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`)
		case Reset:
			reset(w)
		case ErrorEvent:
			s.event("", map[string]any{"error": map[string]any{"message": "upstream overloaded", "code": 502}})
		}
		return true
	}
	for _, p := range words(r.Text) {
		s.event("", chunk(choice(map[string]any{"content": p}, nil), nil))
		if fault() {
			return
		}
	}
	if fault() {
		return
	}
	for i, tc := range r.ToolCalls {
		s.event("", chunk(choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil), nil))
		for _, p := range pieces(tc.Input) {
			s.event("", chunk(choice(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}}, nil), nil))
		}
	}
	stop := r.StopReason
	if stop == "" {
		stop = "stop"
		if len(r.ToolCalls) > 0 {
			stop = "tool_calls"
		}
	}
	s.event("", chunk(choice(map[string]any{}, stop), nil))
	// stream_options.include_usage: one last chunk with no choices.
	u := r.Usage
	s.event("", chunk([]any{}, map[string]any{
		"prompt_tokens": u.Input + u.CacheRead, "completion_tokens": u.Output,
		"total_tokens":          u.Input + u.CacheRead + u.Output,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheRead, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}))
	s.event("", "[DONE]")
}
