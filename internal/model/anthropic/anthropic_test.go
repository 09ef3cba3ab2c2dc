package anthropic

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/model/modeltest/providertest"
)

func newModel(t *testing.T, srv *modeltest.Server) *Model {
	t.Helper()
	return newAdapter(t, providertest.Config{BaseURL: srv.URL, Client: srv.Client(), MaxRetries: 2})
}

func newAdapter(t *testing.T, c providertest.Config) *Model {
	t.Helper()
	m, err := New(Config{
		Model: "claude-sonnet-4-5", APIKey: "sk-test", BaseURL: c.BaseURL, HTTPClient: c.Client,
		MaxRetries: c.MaxRetries, RetryDelay: time.Millisecond, MaxRetryDelay: time.Second, StreamIdleTimeout: c.IdleTimeout,
	})
	return providertest.Must(t, m, err)
}

// TestContract runs the provider contract (providertest) and the cases
// only the Messages API has: cache writes, signed thinking, 529, a 400.
func TestContract(t *testing.T) {
	ok := providertest.Recovered
	providertest.Run(t, providertest.Provider{
		Name:  "anthropic",
		Serve: modeltest.NewAnthropic,
		New:   func(t *testing.T, c providertest.Config) model.Model { return newAdapter(t, c) },
		Responses: []providertest.Response{
			{
				Name:  "text with cache writes",
				Reply: modeltest.Reply{Text: "Hello there, world.", Usage: model.Usage{Input: 25, Output: 7, CacheRead: 100, CacheWrite: 50}},
				Text:  "Hello there, world.",
				Parts: []model.Part{{Type: model.PartText, Text: "Hello there, world."}},
				Stop:  "end_turn",
				Usage: model.Usage{Input: 25, Output: 7, CacheRead: 100, CacheWrite: 50},
			},
			{
				Name: "parallel tool calls after signed thinking",
				Reply: modeltest.Reply{Thinking: "Two files to read.", Signature: "sig-abc==", ToolCalls: []modeltest.ToolCall{
					{ID: "toolu_01", Name: "Read", Input: `{"file_path":"a.go"}`},
					{ID: "toolu_02", Name: "Grep", Input: `{"pattern":"func main"}`},
				}},
				Parts: []model.Part{
					{Type: model.PartThinking, Text: "Two files to read.", Signature: "sig-abc=="},
					{Type: model.PartToolUse, ID: "toolu_01", Name: "Read", Input: json.RawMessage(`{"file_path":"a.go"}`)},
					{Type: model.PartToolUse, ID: "toolu_02", Name: "Grep", Input: json.RawMessage(`{"pattern":"func main"}`)},
				},
				Stop: "tool_use",
			},
			{
				Name:  "tool call without arguments",
				Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_09", Name: "LS"}}},
				Parts: []model.Part{{Type: model.PartToolUse, ID: "toolu_09", Name: "LS", Input: json.RawMessage(`{}`)}},
				Stop:  "tool_use",
			},
		},
		Errors: []providertest.Errors{
			{Name: "529 overloaded then success", Replies: []modeltest.Reply{{Status: 529}, ok}, Requests: 2},
			{Name: "error event forever names overloaded", Replies: []modeltest.Reply{{Text: "a b", Fault: modeltest.ErrorEvent}, {Text: "a b", Fault: modeltest.ErrorEvent}, {Text: "a b", Fault: modeltest.ErrorEvent}}, Requests: 3, Restarts: 2, Err: "anthropic: 529 overloaded: Overloaded"},
			{Name: "reset before any text then success", Replies: []modeltest.Reply{{ToolCalls: []modeltest.ToolCall{{ID: "t", Name: "LS"}}, Fault: modeltest.Reset}, ok}, Requests: 2},
			{Name: "401 names the key", Replies: []modeltest.Reply{{Status: 401, ErrorMessage: "invalid x-api-key"}}, Requests: 1, Err: "anthropic: 401 authentication failed: check ANTHROPIC_API_KEY"},
			{Name: "400 is not retried", Replies: []modeltest.Reply{{Status: 400, ErrorMessage: "messages: field required"}}, Requests: 1, Err: "anthropic: 400 bad request: messages: field required"},
			{Name: "retry-after of an hour", Replies: []modeltest.Reply{{Status: 429, RetryAfter: "3600"}}, Requests: 1, Err: "server asked to wait 1h0m0s"},
		},
	})
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
