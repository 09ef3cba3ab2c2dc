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
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model/fakewire"
)

// The scripted reply and its faults are fakewire's (the one fake model's
// wire, which brood bench serves too).
type (
	Fault    = fakewire.Fault
	ToolCall = fakewire.ToolCall
	Reply    = fakewire.Reply
	// Search and SearchResult script a server-side web search.
	Search       = fakewire.Search
	SearchResult = fakewire.SearchResult
)

// Faults (fakewire's).
const (
	NoFault    = fakewire.NoFault
	Malformed  = fakewire.Malformed
	Reset      = fakewire.Reset
	Truncate   = fakewire.Truncate
	ErrorEvent = fakewire.ErrorEvent
)

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
