// Package providertest is the contract every model provider adapter
// passes (as engine/enginetest is for engines): streamed text and tool
// calls with usage, retries on the statuses and faults real servers
// produce with one-line errors, a refused connection, a stream that goes
// silent, and a consumer that stops early — all against modeltest's
// loopback servers. A provider's test calls Run with its own adapter and
// adds the cases only it has. Only tests import it.
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// Config is what the contract asks of an adapter it makes.
type Config struct {
	BaseURL     string
	Client      *http.Client // nil: the adapter's default
	MaxRetries  int
	IdleTimeout time.Duration // 0: the adapter's default
}

// Provider is one adapter under the contract.
type Provider struct {
	Name     string // the prefix of its errors: "anthropic", "openai"
	BasePath string // what its base URL ends in after the host ("/v1" for OpenAI)
	// Serve starts the loopback server speaking its wire
	// (modeltest.NewAnthropic, modeltest.NewOpenAI).
	Serve func(t testing.TB, replies ...modeltest.Reply) *modeltest.Server
	// New makes the adapter, retrying at most c.MaxRetries times with
	// millisecond delays and waiting at most a second for a retry-after.
	New func(t *testing.T, c Config) model.Model
	// Responses and Errors are the provider's own cases, run by the
	// same checks after the contract's.
	Responses []Response
	Errors    []Errors
}

// Response is a reply and what the adapter must make of it.
type Response struct {
	Name  string
	Reply modeltest.Reply
	Text  string // streamed text
	Parts []model.Part
	Stop  string
	Usage model.Usage
}

// Errors is a sequence of replies and how the adapter must come out of
// them: how many requests, how many restarts, and an error holding Err
// ("" : success with the text "recovered fine").
type Errors struct {
	Name               string
	Replies            []modeltest.Reply
	Requests, Restarts int
	Err                string
}

// Recovered is the reply the Errors cases end on when they succeed.
var Recovered = modeltest.Reply{Text: "recovered fine"}

// Result is everything a stream produced.
type Result struct {
	Text     string // text deltas since the last Restart
	Restarts int
	Resp     *model.Response
	Err      error
}

// Stream runs one request to the end.
func Stream(m model.Model, req *model.Request) Result {
	var r Result
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			r.Err = err
			return r
		}
		if c.Restart {
			r.Restarts++
			r.Text = ""
		}
		r.Text += c.TextDelta
		if c.Done != nil {
			r.Resp = c.Done
		}
	}
	return r
}

func hi() *model.Request { return &model.Request{Messages: []model.Message{model.UserText("hi")}} }

// Run runs the contract, then p's own cases.
func Run(t *testing.T, p Provider) {
	t.Run("Responses", func(t *testing.T) {
		for _, tc := range append(responses(), p.Responses...) {
			t.Run(tc.Name, func(t *testing.T) { checkResponse(t, p, tc) })
		}
	})
	t.Run("Errors", func(t *testing.T) {
		for _, tc := range append(errorCases(p.Name), p.Errors...) {
			t.Run(tc.Name, func(t *testing.T) { checkErrors(t, p, tc) })
		}
	})
	t.Run("ConnectionRefused", func(t *testing.T) { connectionRefused(t, p) })
	t.Run("IdleTimeout", func(t *testing.T) { idleTimeout(t, p) })
	t.Run("BreakingOutEarly", func(t *testing.T) { breakingOutEarly(t, p) })
}

func responses() []Response {
	return []Response{
		{
			Name:  "text with cached prompt tokens",
			Reply: modeltest.Reply{Text: "Hello there, world.", Usage: model.Usage{Input: 20, Output: 7, CacheRead: 1024}},
			Text:  "Hello there, world.",
			Parts: []model.Part{{Type: model.PartText, Text: "Hello there, world."}},
			Stop:  "end_turn",
			Usage: model.Usage{Input: 20, Output: 7, CacheRead: 1024},
		},
		{
			Name: "tool call with streamed arguments",
			Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
				{ID: "call_abc", Name: "Read", Input: `{"file_path":"/tmp/a.go","limit":20}`},
			}, Usage: model.Usage{Input: 10, Output: 30}},
			Parts: []model.Part{
				{Type: model.PartToolUse, ID: "call_abc", Name: "Read", Input: json.RawMessage(`{"file_path":"/tmp/a.go","limit":20}`)},
			},
			Stop:  "tool_use",
			Usage: model.Usage{Input: 10, Output: 30},
		},
		{
			Name: "parallel tool calls after text",
			Reply: modeltest.Reply{Text: "Both.", ToolCalls: []modeltest.ToolCall{
				{ID: "call_1", Name: "Read", Input: `{"file_path":"a.go"}`},
				{ID: "call_2", Name: "Grep", Input: `{"pattern":"func main"}`},
			}},
			Text: "Both.",
			Parts: []model.Part{
				{Type: model.PartText, Text: "Both."},
				{Type: model.PartToolUse, ID: "call_1", Name: "Read", Input: json.RawMessage(`{"file_path":"a.go"}`)},
				{Type: model.PartToolUse, ID: "call_2", Name: "Grep", Input: json.RawMessage(`{"pattern":"func main"}`)},
			},
			Stop: "tool_use",
		},
	}
}

func errorCases(name string) []Errors {
	ok := Recovered
	partial := func(f modeltest.Fault) modeltest.Reply { return modeltest.Reply{Text: "partial text here", Fault: f} }
	ev := modeltest.Reply{Text: "a b", Fault: modeltest.ErrorEvent}
	return []Errors{
		{"429 with retry-after then success", []modeltest.Reply{{Status: 429, RetryAfter: "0"}, ok}, 2, 0, ""},
		{"500 then success", []modeltest.Reply{{Status: 500}, ok}, 2, 0, ""},
		{"503 then success", []modeltest.Reply{{Status: 503}, ok}, 2, 0, ""},
		{"500 forever", []modeltest.Reply{{Status: 500}, {Status: 500}, {Status: 500}}, 3, 0, name + ": 500 server error"},
		{"malformed SSE then success", []modeltest.Reply{partial(modeltest.Malformed), ok}, 2, 1, ""},
		{"connection reset mid-stream then success", []modeltest.Reply{partial(modeltest.Reset), ok}, 2, 1, ""},
		{"stream cut short then success", []modeltest.Reply{partial(modeltest.Truncate), ok}, 2, 1, ""},
		{"error event mid-stream then success", []modeltest.Reply{partial(modeltest.ErrorEvent), ok}, 2, 1, ""},
		{"error event mid-stream forever", []modeltest.Reply{ev, ev, ev}, 3, 2, name + ": "},
		{"401", []modeltest.Reply{{Status: 401, ErrorMessage: "invalid key"}}, 1, 0, name + ": 401 authentication failed"},
		{"retry-after beyond the limit", []modeltest.Reply{{Status: 429, RetryAfter: "120"}}, 1, 0, "server asked to wait 2m0s"},
	}
}

func checkResponse(t *testing.T, p Provider, tc Response) {
	srv := p.Serve(t, tc.Reply)
	r := Stream(p.New(t, Config{BaseURL: srv.URL, Client: srv.Client(), MaxRetries: 2}), &model.Request{Messages: []model.Message{model.UserText("go")}})
	if r.Err != nil {
		t.Fatalf("stream error: %v", r.Err)
	}
	if r.Text != tc.Text {
		t.Errorf("streamed text = %q, want %q", r.Text, tc.Text)
	}
	if r.Resp == nil {
		t.Fatal("no Done chunk")
	}
	got, _ := json.Marshal(r.Resp.Message.Content)
	want, _ := json.Marshal(tc.Parts)
	if !bytes.Equal(got, want) {
		t.Errorf("content =\n %s\nwant\n %s", got, want)
	}
	if r.Resp.StopReason != tc.Stop {
		t.Errorf("stop reason = %q, want %q", r.Resp.StopReason, tc.Stop)
	}
	if r.Resp.Usage != tc.Usage {
		t.Errorf("usage = %+v, want %+v", r.Resp.Usage, tc.Usage)
	}
}

func checkErrors(t *testing.T, p Provider, tc Errors) {
	srv := p.Serve(t, tc.Replies...)
	r := Stream(p.New(t, Config{BaseURL: srv.URL, Client: srv.Client(), MaxRetries: 2}), hi())
	if n := len(srv.Requests()); n != tc.Requests {
		t.Errorf("server saw %d requests, want %d", n, tc.Requests)
	}
	if r.Restarts != tc.Restarts {
		t.Errorf("restarts = %d, want %d", r.Restarts, tc.Restarts)
	}
	if tc.Err != "" {
		if r.Err == nil || !strings.Contains(r.Err.Error(), tc.Err) {
			t.Fatalf("error = %v, want it to contain %q", r.Err, tc.Err)
		}
		if strings.Contains(r.Err.Error(), "\n") {
			t.Errorf("error spans several lines: %q", r.Err)
		}
		return
	}
	if r.Err != nil {
		t.Fatalf("stream error: %v", r.Err)
	}
	if r.Text != Recovered.Text || r.Resp == nil || r.Resp.Message.Text() != Recovered.Text {
		t.Errorf("text after restarts = %q, final = %+v; want %q", r.Text, r.Resp, Recovered.Text)
	}
}

func connectionRefused(t *testing.T, p Provider) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + p.BasePath
	ln.Close() // nothing listens here any more
	r := Stream(p.New(t, Config{BaseURL: base, MaxRetries: 2}), hi())
	want := p.Name + ": server at " + base + " refused the connection: is it running?"
	if r.Err == nil || !strings.HasPrefix(r.Err.Error(), want) || strings.Contains(r.Err.Error(), "\n") {
		t.Fatalf("error = %v, want one line starting %q", r.Err, want)
	}
}

// idleTimeout: a server that accepts the connection and never answers;
// each attempt ends after the idle timeout, is retried as a lost
// connection is, and the run ends with one line saying what happened.
func idleTimeout(t *testing.T, p Provider) {
	srv := modeltest.NewSilent(t)
	r := Stream(p.New(t, Config{BaseURL: srv.URL, MaxRetries: 1, IdleTimeout: 200 * time.Millisecond}), hi())
	want := p.Name + ": no response from " + srv.URL + ": no data for 200ms (stream idle timeout) (gave up after 2 attempts)"
	if r.Err == nil || r.Err.Error() != want {
		t.Fatalf("error = %v, want %q", r.Err, want)
	}
	for i := range 2 {
		select {
		case <-srv.Conns:
		case <-t.Context().Done():
			t.Fatalf("the server saw %d connection(s), want 2 (one per attempt)", i)
		}
	}
}

func breakingOutEarly(t *testing.T, p Provider) {
	srv := p.Serve(t, modeltest.Reply{Text: "one two three four"})
	m := p.New(t, Config{BaseURL: srv.URL, Client: srv.Client(), MaxRetries: 2})
	n := 0
	for c, err := range m.Stream(context.Background(), hi()) {
		if err != nil {
			t.Fatal(err)
		}
		if c.TextDelta != "" {
			n++
			break
		}
	}
	if n != 1 {
		t.Fatalf("got %d deltas before break, want 1", n)
	}
}
