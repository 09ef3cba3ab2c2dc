package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// sseWriter writes server-sent events and flushes each one, so the client
// sees them arrive one by one as from a real server.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sseWriter{w: w, f: f}
}

// event writes one event; name is empty for OpenAI's data-only lines. data
// is a JSON value, or a string sent as is.
func (s *sseWriter) event(name string, data any) {
	var b []byte
	if str, ok := data.(string); ok {
		b = []byte(str)
	} else {
		var err error
		if b, err = json.Marshal(data); err != nil {
			panic(err) // only our own literal maps go here
		}
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

// deltas splits text into the pieces a model streams: about four tokens
// (three words) each, as the real APIs send them.
func deltas(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	var out []string
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

// argPieces cuts streamed JSON arguments in two at an arbitrary point, as
// the real APIs do.
func argPieces(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

// anthropicWire writes a reply as an Anthropic Messages stream.
func anthropicWire(s *sseWriter, model string, n int, r reply) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_bench_%06d", n), "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": r.In, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1},
	}})
	index := 0
	if r.Text != "" {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.event("ping", map[string]any{"type": "ping"})
		for _, p := range deltas(r.Text) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range r.Calls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range argPieces(c.Input) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if len(r.Calls) > 0 {
		stop = "tool_use"
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.Out}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// openAIWire writes a reply as an OpenAI Chat Completions stream (with
// stream_options.include_usage's last chunk).
func openAIWire(s *sseWriter, model string, n int, r reply) {
	id := fmt.Sprintf("chatcmpl-bench-%06d", n)
	chunk := func(choices []any, usage any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000,
			"model": model, "system_fingerprint": "fp_bench", "choices": choices, "usage": usage}
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}
	s.event("", chunk(choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil))
	for _, p := range deltas(r.Text) {
		s.event("", chunk(choice(map[string]any{"content": p}, nil), nil))
	}
	for i, c := range r.Calls {
		s.event("", chunk(choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""},
		}}}, nil), nil))
		for _, p := range argPieces(c.Input) {
			s.event("", chunk(choice(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}}, nil), nil))
		}
	}
	stop := "stop"
	if len(r.Calls) > 0 {
		stop = "tool_calls"
	}
	s.event("", chunk(choice(map[string]any{}, stop), nil))
	s.event("", chunk([]any{}, map[string]any{
		"prompt_tokens": r.In, "completion_tokens": r.Out, "total_tokens": r.In + r.Out,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0},
	}))
	s.event("", "[DONE]")
}
