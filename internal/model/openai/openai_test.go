package openai

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/model/modeltest/providertest"
)

func newModel(t *testing.T, srv *modeltest.Server, id string) *Model {
	t.Helper()
	return newAdapter(t, id, providertest.Config{BaseURL: srv.URL, Client: srv.Client(), MaxRetries: 2})
}

func newAdapter(t *testing.T, id string, c providertest.Config) *Model {
	t.Helper()
	m, err := New(Config{
		Model: id, APIKey: "sk-test", BaseURL: c.BaseURL, HTTPClient: c.Client,
		MaxRetries: c.MaxRetries, RetryDelay: time.Millisecond, MaxRetryDelay: time.Second, StreamIdleTimeout: c.IdleTimeout,
	})
	return providertest.Must(t, m, err)
}

// TestContract runs the provider contract (providertest) and the cases
// only OpenAI-compatible servers have: a local server's tool calls without
// ids or with broken arguments, a 404 for an unknown model.
func TestContract(t *testing.T) {
	providertest.Run(t, providertest.Provider{
		Name:     "openai",
		BasePath: "/v1",
		Serve:    modeltest.NewOpenAI,
		New:      func(t *testing.T, c providertest.Config) model.Model { return newAdapter(t, "gpt-4.1", c) },
		Responses: []providertest.Response{{
			Name: "local server without ids and with broken arguments",
			Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
				{Name: "Bash", Input: `{"command": "ls`},
			}, StopReason: "stop"},
			Parts: []model.Part{
				{Type: model.PartToolUse, ID: "call_0", Name: "Bash", Input: json.RawMessage(`"{\"command\": \"ls"`)},
			},
			Stop: "tool_use",
		}},
		Errors: []providertest.Errors{
			{Name: "401 names the server", Replies: []modeltest.Reply{{Status: 401, ErrorMessage: "Incorrect API key provided"}}, Requests: 1, Err: "openai: 401 authentication failed at "},
			{Name: "404 model", Replies: []modeltest.Reply{{Status: 404, ErrorMessage: "model 'nope' not found"}}, Requests: 1, Err: `check the model id "gpt-4.1"`},
		},
	})
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{APIKey: "k"}, "no model id"},
		{Config{Model: "gpt-5"}, "export OPENAI_API_KEY"},
		{Config{Model: "x", KeyEnv: "OPENROUTER_API_KEY"}, "export OPENROUTER_API_KEY"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want %q", tt.cfg, err, tt.want)
		}
	}
	m, err := New(Config{Model: "qwen3:8b", Name: "ollama/qwen3:8b", BaseURL: "http://localhost:11434/v1"})
	if err != nil {
		t.Fatalf("a local server needs no key: %v", err)
	}
	if m.Name() != "ollama/qwen3:8b" {
		t.Errorf("Name() = %q", m.Name())
	}
}
