// Package fakewire writes the two model wire formats brood speaks
// (Anthropic Messages SSE, OpenAI Chat Completions SSE) from a scripted
// Reply, with the faults real servers produce. It is the one fake model's
// wire: internal/model/modeltest serves it to tests and internal/bench to
// `brood bench`, so it imports no test package.
package fakewire

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// Fault is a failure injected into an otherwise successful reply.
type Fault int

const (
	// NoFault serves the reply normally.
	NoFault Fault = iota
	// Malformed sends an event whose data is not JSON after the first text
	// delta (or after the opening event when there is no text).
	Malformed
	// Reset sends the first text delta, then resets the TCP connection.
	Reset
	// Truncate sends the first text delta, then ends the body cleanly
	// without the final events, as a proxy that gives up would.
	Truncate
	// ErrorEvent sends the first text delta, then an error event inside the
	// stream (Anthropic's overloaded_error; an {"error":...} chunk for
	// OpenAI-compatible proxies), then ends the body.
	ErrorEvent
)

// ToolCall is a scripted tool call; Input is its JSON arguments, streamed in
// pieces as the real APIs do.
type ToolCall struct {
	ID    string
	Name  string
	Input string
}

// Reply is one scripted response. The zero Reply is an empty end_turn answer.
type Reply struct {
	Text      string
	Thinking  string // Anthropic only: a thinking block before the text
	Signature string // the thinking block's signature
	ToolCalls []ToolCall
	// Search, Anthropic only, is a server-side web search after the text.
	Search *Search
	Usage  model.Usage
	// StopReason defaults to tool_use when there are tool calls, else
	// end_turn (OpenAI: tool_calls / stop).
	StopReason string

	// Status, when set and not 200, makes the reply an error response with
	// this status and a body in the provider's error format.
	Status       int
	RetryAfter   string // sent as the retry-after header with an error
	ErrorMessage string // defaults to a message naming the status
	Fault        Fault
	// Latency delays the response's first byte; it adds to the server's.
	Latency time.Duration
}

// sse writes server-sent events and flushes each at once, so the client
// sees them arrive one by one as from a real server.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name may be empty (OpenAI sends data lines only).
func (s *sse) event(name string, data any) {
	var b []byte
	switch d := data.(type) {
	case string:
		b = []byte(d)
	default:
		var err error
		if b, err = json.Marshal(d); err != nil {
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

// reset aborts the connection with a TCP RST after flushing what was sent.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("fakewire: response writer cannot be hijacked")
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic("fakewire: hijack: " + err.Error())
	}
	_ = buf.Flush()
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// words splits text into the deltas a model would stream: one per word,
// each keeping its trailing space.
func words(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

// pieces splits s into up to three parts at byte offsets, as streamed JSON
// arguments arrive cut at arbitrary points.
func pieces(s string) []string {
	if len(s) < 3 {
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}

func errorMessage(r Reply) string {
	if r.ErrorMessage != "" {
		return r.ErrorMessage
	}
	return fmt.Sprintf("scripted %d %s", r.Status, http.StatusText(r.Status))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int) string { return fmt.Sprint(n) }

// RequestModel is the model id a request body asked for, echoed in replies.
func RequestModel(body []byte) string {
	var v struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Model
}
