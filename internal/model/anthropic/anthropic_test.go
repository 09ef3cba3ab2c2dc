package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// result is everything a stream produced, for assertions.
type result struct {
	text     string // text deltas since the last Restart
	restarts int
	resp     *model.Response
	err      error
}

func run(t *testing.T, m model.Model, req *model.Request) result {
	t.Helper()
	var r result
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			r.err = err
			return r
		}
		if c.Restart {
			r.restarts++
			r.text = ""
		}
		r.text += c.TextDelta
		if c.Done != nil {
			r.resp = c.Done
		}
	}
	return r
}

func newModel(t *testing.T, srv *modeltest.Server) *Model {
	t.Helper()
	m, err := New(Config{
		Model: "claude-sonnet-4-5", APIKey: "sk-test", BaseURL: srv.URL, HTTPClient: srv.Client(),
		MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStreamResponses(t *testing.T) {
	tests := []struct {
		name      string
		reply     modeltest.Reply
		wantText  string
		wantParts []model.Part
		wantStop  string
		wantUsage model.Usage
	}{
		{
			name:      "text",
			reply:     modeltest.Reply{Text: "Hello there, world.", Usage: model.Usage{Input: 25, Output: 7, CacheRead: 100, CacheWrite: 50}},
			wantText:  "Hello there, world.",
			wantParts: []model.Part{{Type: model.PartText, Text: "Hello there, world."}},
			wantStop:  "end_turn",
			wantUsage: model.Usage{Input: 25, Output: 7, CacheRead: 100, CacheWrite: 50},
		},
		{
			name: "tool call with streamed arguments",
			reply: modeltest.Reply{Text: "Reading it.", ToolCalls: []modeltest.ToolCall{
				{ID: "toolu_01", Name: "Read", Input: `{"file_path":"/tmp/a.go","limit":20}`},
			}, Usage: model.Usage{Input: 10, Output: 30}},
			wantText: "Reading it.",
			wantParts: []model.Part{
				{Type: model.PartText, Text: "Reading it."},
				{Type: model.PartToolUse, ID: "toolu_01", Name: "Read", Input: json.RawMessage(`{"file_path":"/tmp/a.go","limit":20}`)},
			},
			wantStop:  "tool_use",
			wantUsage: model.Usage{Input: 10, Output: 30},
		},
		{
			name: "parallel tool calls after signed thinking",
			reply: modeltest.Reply{Thinking: "Two files to read.", Signature: "sig-abc==", ToolCalls: []modeltest.ToolCall{
				{ID: "toolu_01", Name: "Read", Input: `{"file_path":"a.go"}`},
				{ID: "toolu_02", Name: "Grep", Input: `{"pattern":"func main"}`},
			}},
			wantParts: []model.Part{
				{Type: model.PartThinking, Text: "Two files to read.", Signature: "sig-abc=="},
				{Type: model.PartToolUse, ID: "toolu_01", Name: "Read", Input: json.RawMessage(`{"file_path":"a.go"}`)},
				{Type: model.PartToolUse, ID: "toolu_02", Name: "Grep", Input: json.RawMessage(`{"pattern":"func main"}`)},
			},
			wantStop: "tool_use",
		},
		{
			name:      "tool call without arguments",
			reply:     modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_09", Name: "LS"}}},
			wantParts: []model.Part{{Type: model.PartToolUse, ID: "toolu_09", Name: "LS", Input: json.RawMessage(`{}`)}},
			wantStop:  "tool_use",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewAnthropic(t, tt.reply)
			r := run(t, newModel(t, srv), &model.Request{Messages: []model.Message{model.UserText("go")}})
			if r.err != nil {
				t.Fatalf("stream error: %v", r.err)
			}
			if r.text != tt.wantText {
				t.Errorf("streamed text = %q, want %q", r.text, tt.wantText)
			}
			if r.resp == nil {
				t.Fatal("no Done chunk")
			}
			got, _ := json.Marshal(r.resp.Message.Content)
			want, _ := json.Marshal(tt.wantParts)
			if !bytes.Equal(got, want) {
				t.Errorf("content =\n %s\nwant\n %s", got, want)
			}
			if r.resp.StopReason != tt.wantStop {
				t.Errorf("stop reason = %q, want %q", r.resp.StopReason, tt.wantStop)
			}
			if r.resp.Usage != tt.wantUsage {
				t.Errorf("usage = %+v, want %+v", r.resp.Usage, tt.wantUsage)
			}
		})
	}
}

func TestErrorsAndRetries(t *testing.T) {
	ok := modeltest.Reply{Text: "recovered fine"}
	tests := []struct {
		name         string
		replies      []modeltest.Reply
		wantRequests int
		wantRestarts int
		wantErr      string // empty: success with ok's text
	}{
		{"429 with retry-after then success", []modeltest.Reply{{Status: 429, RetryAfter: "0"}, ok}, 2, 0, ""},
		{"500 then success", []modeltest.Reply{{Status: 500}, ok}, 2, 0, ""},
		{"529 overloaded then success", []modeltest.Reply{{Status: 529}, ok}, 2, 0, ""},
		{"503 then success", []modeltest.Reply{{Status: 503}, ok}, 2, 0, ""},
		{"500 forever", []modeltest.Reply{{Status: 500}, {Status: 500}, {Status: 500}}, 3, 0, "anthropic: 500 server error"},
		{"malformed SSE then success", []modeltest.Reply{{Text: "partial text here", Fault: modeltest.Malformed}, ok}, 2, 1, ""},
		{"connection reset mid-stream then success", []modeltest.Reply{{Text: "partial text here", Fault: modeltest.Reset}, ok}, 2, 1, ""},
		{"stream cut short then success", []modeltest.Reply{{Text: "partial text here", Fault: modeltest.Truncate}, ok}, 2, 1, ""},
		{"error event mid-stream then success", []modeltest.Reply{{Text: "partial text here", Fault: modeltest.ErrorEvent}, ok}, 2, 1, ""},
		{"error event mid-stream forever", []modeltest.Reply{{Text: "a b", Fault: modeltest.ErrorEvent}, {Text: "a b", Fault: modeltest.ErrorEvent}, {Text: "a b", Fault: modeltest.ErrorEvent}}, 3, 2, "anthropic: 529 overloaded: Overloaded"},
		{"reset before any text then success", []modeltest.Reply{{ToolCalls: []modeltest.ToolCall{{ID: "t", Name: "LS"}}, Fault: modeltest.Reset}, ok}, 2, 0, ""},
		{"401", []modeltest.Reply{{Status: 401, ErrorMessage: "invalid x-api-key"}}, 1, 0, "anthropic: 401 authentication failed: check ANTHROPIC_API_KEY"},
		{"400 is not retried", []modeltest.Reply{{Status: 400, ErrorMessage: "messages: field required"}}, 1, 0, "anthropic: 400 bad request: messages: field required"},
		{"retry-after beyond the limit", []modeltest.Reply{{Status: 429, RetryAfter: "3600"}}, 1, 0, "server asked to wait 1h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewAnthropic(t, tt.replies...)
			r := run(t, newModel(t, srv), &model.Request{Messages: []model.Message{model.UserText("hi")}})
			if n := len(srv.Requests()); n != tt.wantRequests {
				t.Errorf("server saw %d requests, want %d", n, tt.wantRequests)
			}
			if r.restarts != tt.wantRestarts {
				t.Errorf("restarts = %d, want %d", r.restarts, tt.wantRestarts)
			}
			if tt.wantErr != "" {
				if r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", r.err, tt.wantErr)
				}
				if strings.Contains(r.err.Error(), "\n") {
					t.Errorf("error spans several lines: %q", r.err)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("stream error: %v", r.err)
			}
			if r.text != ok.Text || r.resp == nil || r.resp.Message.Text() != ok.Text {
				t.Errorf("text after restarts = %q, final = %+v; want %q", r.text, r.resp, ok.Text)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here any more
	m, err := New(Config{Model: "claude-haiku-4-5", APIKey: "k", BaseURL: "http://" + addr, RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, m, &model.Request{Messages: []model.Message{model.UserText("hi")}})
	want := "anthropic: server at http://" + addr + " refused the connection: is it running?"
	if r.err == nil || !strings.HasPrefix(r.err.Error(), want) {
		t.Fatalf("error = %v, want prefix %q", r.err, want)
	}
}

func TestBreakingOutEarly(t *testing.T) {
	srv := modeltest.NewAnthropic(t, modeltest.Reply{Text: "one two three four"})
	m := newModel(t, srv)
	n := 0
	for c, err := range m.Stream(context.Background(), &model.Request{Messages: []model.Message{model.UserText("hi")}}) {
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

func TestNewValidates(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{APIKey: "k"}, "no model id"},
		{Config{Model: "claude-opus-4-1"}, "export ANTHROPIC_API_KEY"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}
