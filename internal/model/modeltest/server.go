// Package modeltest holds loopback fake model servers for tests. Each speaks
// one provider's real wire format (Anthropic Messages SSE, OpenAI Chat
// Completions SSE), serves scripted replies in order, can inject the faults
// real servers produce (error statuses with retry-after, malformed events, a
// connection reset mid-stream, a stream cut short), and records every
// request body with the time it arrived.
//
// Benchmarks and fork tests use it to drive a real provider adapter without
// the network; the provider packages use it for their own tests. Nothing
// outside tests may import it.
package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
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
	Usage     model.Usage
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

// Recorded is one request the server received.
type Recorded struct {
	N      int       // 0-based arrival order
	At     time.Time // when the request arrived, before any latency
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the recorded body into a generic map, failing t on error.
func (r Recorded) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("modeltest: request %d body is not JSON: %v\n%s", r.N, err, r.Body)
	}
	return v
}

// Responder picks the reply for a request when the scripted queue is empty.
type Responder func(req Recorded) Reply

// Server is a loopback fake model server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL to give the provider adapter (for OpenAI it ends
	// in /v1, as the SDK expects).
	URL string

	t     testing.TB
	srv   *httptest.Server
	write func(w http.ResponseWriter, rec Recorded, r Reply)

	mu        sync.Mutex
	queue     []Reply
	responder Responder
	latency   time.Duration
	requests  []Recorded
}

func newServer(t testing.TB, path string, write func(http.ResponseWriter, Recorded, Reply), replies []Reply) *Server {
	t.Helper()
	s := &Server{t: t, write: write, queue: append([]Reply(nil), replies...)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, s.handle)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetResponder serves requests that arrive after the script ran out. Without
// one such a request gets a 400 and fails the test.
func (s *Server) SetResponder(f Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// SetLatency delays the first byte of every later response by d.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "modeltest: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	rec := Recorded{N: len(s.requests), At: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.requests = append(s.requests, rec)
	var reply Reply
	var ok bool
	if len(s.queue) > 0 {
		reply, ok = s.queue[0], true
		s.queue = s.queue[1:]
	}
	responder, latency := s.responder, s.latency
	s.mu.Unlock()
	if !ok && responder != nil {
		reply, ok = responder(rec), true
	}
	if !ok {
		s.t.Errorf("modeltest: request %d arrived but no reply is scripted", rec.N)
		reply = Reply{Status: http.StatusBadRequest, ErrorMessage: fmt.Sprintf("modeltest: no reply scripted for request %d", rec.N)}
	}
	if d := latency + reply.Latency; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	s.write(w, rec, reply)
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
		panic("modeltest: response writer cannot be hijacked")
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic("modeltest: hijack: " + err.Error())
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

// requestModel is the model id the request asked for, echoed in replies.
func requestModel(body []byte) string {
	var v struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Model
}
