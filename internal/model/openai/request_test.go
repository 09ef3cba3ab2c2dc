package openai

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/model/modeltest/providertest"
)

func conversation() *model.Request {
	return providertest.Conversation(
		model.UserText("read a.go and b.go"),
		model.Message{Role: model.RoleAssistant, Content: []model.Part{
			{Type: model.PartThinking, Text: "hidden", Signature: "sig"},
			{Type: model.PartText, Text: "Reading."},
			providertest.ReadCall("call_1", "a.go"),
			providertest.ReadCall("call_2", "b.go"),
		}},
		model.Message{Role: model.RoleUser, Content: []model.Part{
			{Type: model.PartToolResult, ToolUseID: "call_1", Text: "package a"},
			{Type: model.PartToolResult, ToolUseID: "call_2", Text: "no such file", IsError: true},
			{Type: model.PartText, Text: "now summarise"},
		}},
	)
}

type wireRequest struct {
	Model               string            `json:"model"`
	Stream              bool              `json:"stream"`
	StreamOptions       json.RawMessage   `json:"stream_options"`
	Messages            []json.RawMessage `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	ReasoningEffort     *string           `json:"reasoning_effort"`
	MaxTokens           *int64            `json:"max_tokens"`
	MaxCompletionTokens *int64            `json:"max_completion_tokens"`
}

func sendOne(t *testing.T, cfg Config, req *model.Request) (wireRequest, modeltest.Recorded) {
	t.Helper()
	srv := modeltest.NewOpenAI(t, modeltest.Reply{Text: "ok"})
	cfg.BaseURL, cfg.HTTPClient, cfg.RetryDelay = srv.URL, srv.Client(), time.Millisecond
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return providertest.SendOne[wireRequest](t, m, srv, req)
}

func TestRequestBody(t *testing.T) {
	w, rec := sendOne(t, Config{Model: "gpt-4.1", APIKey: "sk-test"}, conversation())
	if got := rec.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("authorization = %q", got)
	}
	if w.Model != "gpt-4.1" || !w.Stream || string(w.StreamOptions) != `{"include_usage":true}` {
		t.Errorf("model/stream/stream_options = %q %v %s", w.Model, w.Stream, w.StreamOptions)
	}
	if len(w.Tools) != 1 || string(w.Tools[0]) != `{"function":{"name":"Read","description":"Reads a file.","parameters":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}},"type":"function"}` {
		t.Errorf("tools = %s", w.Tools)
	}
	want := []string{
		`{"content":"You are brood.","role":"system"}`,
		`{"content":"read a.go and b.go","role":"user"}`,
		`{"content":"Reading.","tool_calls":[{"id":"call_1","function":{"arguments":"{\"file_path\":\"a.go\"}","name":"Read"},"type":"function"},{"id":"call_2","function":{"arguments":"{\"file_path\":\"b.go\"}","name":"Read"},"type":"function"}],"role":"assistant"}`,
		`{"content":"package a","tool_call_id":"call_1","role":"tool"}`,
		`{"content":"Error: no such file","tool_call_id":"call_2","role":"tool"}`,
		`{"content":"now summarise","role":"user"}`,
	}
	if len(w.Messages) != len(want) {
		t.Fatalf("sent %d messages, want %d:\n%s", len(w.Messages), len(want), rec.Body)
	}
	for i := range want {
		if string(w.Messages[i]) != want[i] {
			t.Errorf("message %d =\n %s\nwant\n %s", i, w.Messages[i], want[i])
		}
	}
	if w.ReasoningEffort != nil || w.MaxTokens != nil || w.MaxCompletionTokens != nil {
		t.Errorf("unasked-for reasoning_effort or token caps sent: %s", rec.Body)
	}
}

func TestRequestReasoningEffort(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		effort     string
		maxTokens  int
		wantEffort string // empty: not sent
		wantMaxCT  bool   // max_completion_tokens rather than max_tokens
	}{
		{"gpt-5 high", Config{Model: "gpt-5"}, "high", 1000, "high", true},
		{"o3 low", Config{Model: "o3-mini"}, "low", 0, "low", true},
		{"o4 xhigh caps at high", Config{Model: "o4-mini"}, "xhigh", 0, "high", true},
		{"openrouter gpt-5 max caps at high", Config{Model: "openai/gpt-5.1"}, "max", 0, "high", true},
		{"gpt-4.1 takes none", Config{Model: "gpt-4.1"}, "high", 1000, "", false},
		{"local model takes none", Config{Model: "qwen3:8b"}, "medium", 0, "", false},
		{"forced by config", Config{Model: "qwen3:8b", Reasoning: true}, "medium", 0, "medium", true},
		{"config max tokens", Config{Model: "llama3", MaxTokens: 512}, "", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.APIKey = "k"
			req := &model.Request{Messages: []model.Message{model.UserText("x")}, Effort: tt.effort, MaxTokens: tt.maxTokens}
			w, rec := sendOne(t, tt.cfg, req)
			got := ""
			if w.ReasoningEffort != nil {
				got = *w.ReasoningEffort
			}
			if got != tt.wantEffort {
				t.Errorf("reasoning_effort = %q, want %q", got, tt.wantEffort)
			}
			wantCap := int64(tt.maxTokens)
			if wantCap == 0 {
				wantCap = int64(tt.cfg.MaxTokens)
			}
			switch {
			case wantCap == 0 && (w.MaxTokens != nil || w.MaxCompletionTokens != nil):
				t.Errorf("a token cap was sent though none was set: %s", rec.Body)
			case wantCap != 0 && tt.wantMaxCT && (w.MaxCompletionTokens == nil || *w.MaxCompletionTokens != wantCap || w.MaxTokens != nil):
				t.Errorf("want max_completion_tokens %d only: %s", wantCap, rec.Body)
			case wantCap != 0 && !tt.wantMaxCT && (w.MaxTokens == nil || *w.MaxTokens != wantCap || w.MaxCompletionTokens != nil):
				t.Errorf("want max_tokens %d only: %s", wantCap, rec.Body)
			}
		})
	}
}

func TestRequestLocalServerWithoutKey(t *testing.T) {
	_, rec := sendOne(t, Config{Model: "llama3"}, &model.Request{Messages: []model.Message{model.UserText("x")}})
	if got := rec.Header.Get("Authorization"); got != "" {
		t.Errorf("authorization = %q, want none for a keyless local server", got)
	}
}

func TestRequestDeterministic(t *testing.T) {
	_, a := sendOne(t, Config{Model: "gpt-5", APIKey: "k"}, conversation())
	_, b := sendOne(t, Config{Model: "gpt-5", APIKey: "k"}, conversation())
	if !bytes.Equal(a.Body, b.Body) {
		t.Errorf("same request, different bodies:\n%s\n%s", a.Body, b.Body)
	}
}
