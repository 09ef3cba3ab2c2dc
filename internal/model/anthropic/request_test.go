package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/model/modeltest/providertest"
)

// conversation is a whole tool round trip: user asks, assistant thinks and
// calls a tool, the tool answers (once failing), the user follows up.
func conversation() *model.Request {
	return providertest.Conversation(
		model.UserText("read a.go"),
		model.Message{Role: model.RoleAssistant, Content: []model.Part{
			{Type: model.PartThinking, Text: "I should read it.", Signature: "sig-1"},
			{Type: model.PartThinking, Text: "unsigned, from another provider"},
			{Type: model.PartText, Text: "Reading."},
			providertest.ReadCall("toolu_1", "a.go"),
		}},
		model.Message{Role: model.RoleUser, Content: []model.Part{
			{Type: model.PartToolResult, ToolUseID: "toolu_1", Text: "package a", IsError: false},
		}},
		model.Message{Role: model.RoleAssistant, Content: []model.Part{
			providertest.ReadCall("toolu_2", "b.go"),
		}},
		model.Message{Role: model.RoleUser, Content: []model.Part{
			{Type: model.PartToolResult, ToolUseID: "toolu_2", Text: "no such file", IsError: true},
			{Type: model.PartText, Text: ""},
			{Type: model.PartText, Text: "now summarise"},
		}},
	)
}

// wireRequest is the part of the Messages request body the tests check.
type wireRequest struct {
	Model     string          `json:"model"`
	MaxTokens int64           `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools       json.RawMessage `json:"tools"`
	Thinking    json.RawMessage `json:"thinking"`
	Temperature *float64        `json:"temperature"`
}

func sendOne(t *testing.T, req *model.Request) (wireRequest, []byte) {
	t.Helper()
	srv := modeltest.NewAnthropic(t, modeltest.Reply{Text: "ok"})
	w, rec := providertest.SendOne[wireRequest](t, newModel(t, srv), srv, req)
	if got, auth := rec.Header.Get("X-Api-Key"), rec.Header.Get("Authorization"); got != "sk-test" || auth != "" {
		t.Errorf("x-api-key = %q, authorization = %q; want the key in x-api-key only", got, auth)
	}
	if rec.Header.Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header")
	}
	return w, rec.Body
}

func TestRequestBody(t *testing.T) {
	w, body := sendOne(t, conversation())
	if w.Model != "claude-sonnet-4-5" || !w.Stream || w.MaxTokens != DefaultMaxTokens {
		t.Errorf("model/stream/max_tokens = %q %v %d", w.Model, w.Stream, w.MaxTokens)
	}
	if got, want := string(w.System), `[{"text":"You are brood.","cache_control":{"type":"ephemeral"},"type":"text"}]`; got != want {
		t.Errorf("system = %s\nwant     %s", got, want)
	}
	if !bytes.Contains(w.Tools, []byte(`"input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)) {
		t.Errorf("tool schema not sent verbatim: %s", w.Tools)
	}
	if !bytes.Contains(w.Tools, []byte(`"description":"Reads a file."`)) {
		t.Errorf("tool description missing: %s", w.Tools)
	}
	if w.Thinking != nil || w.Temperature != nil {
		t.Errorf("thinking %s / temperature %v sent without an effort", w.Thinking, w.Temperature)
	}
	wantMsgs := []struct {
		role   string
		blocks []string
	}{
		{"user", []string{`{"text":"read a.go","type":"text"}`}},
		{"assistant", []string{
			`{"signature":"sig-1","thinking":"I should read it.","type":"thinking"}`,
			`{"text":"Reading.","type":"text"}`,
			`{"id":"toolu_1","input":{"file_path":"a.go"},"name":"Read","type":"tool_use"}`,
		}},
		// The previous request's last message keeps a breakpoint too.
		{"user", []string{`{"tool_use_id":"toolu_1","cache_control":{"type":"ephemeral"},"content":[{"text":"package a","type":"text"}],"type":"tool_result"}`}},
		{"assistant", []string{`{"id":"toolu_2","input":{"file_path":"b.go"},"name":"Read","type":"tool_use"}`}},
		{"user", []string{
			`{"tool_use_id":"toolu_2","is_error":true,"content":[{"text":"no such file","type":"text"}],"type":"tool_result"}`,
			`{"text":"now summarise","cache_control":{"type":"ephemeral"},"type":"text"}`,
		}},
	}
	if len(w.Messages) != len(wantMsgs) {
		t.Fatalf("sent %d messages, want %d:\n%s", len(w.Messages), len(wantMsgs), body)
	}
	for i, want := range wantMsgs {
		got := w.Messages[i]
		if got.Role != want.role || len(got.Content) != len(want.blocks) {
			t.Errorf("message %d: role %s with %d blocks, want %s with %d", i, got.Role, len(got.Content), want.role, len(want.blocks))
			continue
		}
		for j, b := range want.blocks {
			if string(got.Content[j]) != b {
				t.Errorf("message %d block %d =\n %s\nwant\n %s", i, j, got.Content[j], b)
			}
		}
	}
	if n := strings.Count(string(body), "cache_control"); n != 3 {
		t.Errorf("%d cache_control breakpoints, want 3 (system, the previous request's last block, the last block)", n)
	}
}

func TestRequestEffort(t *testing.T) {
	tests := []struct {
		effort    string
		maxTokens int
		budget    int64
		wantMax   int64
	}{
		{"low", 0, 1024, DefaultMaxTokens},
		{"medium", 0, 4096, DefaultMaxTokens},
		{"high", 0, 12000, DefaultMaxTokens},
		{"xhigh", 0, 20000, 20000 + answerRoom},
		{"max", 2000, 27000, 27000 + answerRoom},
		{"low", 500, 1024, 1024 + answerRoom},
	}
	for _, tt := range tests {
		t.Run(tt.effort, func(t *testing.T) {
			req := &model.Request{Messages: []model.Message{model.UserText("think")}, Effort: tt.effort, MaxTokens: tt.maxTokens}
			w, _ := sendOne(t, req)
			var th struct {
				Type   string `json:"type"`
				Budget int64  `json:"budget_tokens"`
			}
			if err := json.Unmarshal(w.Thinking, &th); err != nil {
				t.Fatalf("thinking = %s: %v", w.Thinking, err)
			}
			if th.Type != "enabled" || th.Budget != tt.budget {
				t.Errorf("thinking = %s, want enabled with budget %d", w.Thinking, tt.budget)
			}
			if w.MaxTokens != tt.wantMax || w.MaxTokens <= th.Budget {
				t.Errorf("max_tokens = %d, want %d (> budget %d)", w.MaxTokens, tt.wantMax, th.Budget)
			}
			if w.Temperature != nil {
				t.Errorf("temperature sent with thinking")
			}
		})
	}
}

func TestUnknownEffort(t *testing.T) {
	srv := modeltest.NewAnthropic(t)
	r := providertest.Stream(newModel(t, srv), &model.Request{Messages: []model.Message{model.UserText("x")}, Effort: "extreme"})
	if r.Err == nil || !strings.Contains(r.Err.Error(), `unknown effort "extreme"`) {
		t.Fatalf("error = %v", r.Err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("sent %d requests for an invalid effort", n)
	}
}

// TestRequestDeterministic checks that the same request gives the same bytes
// on the wire, and that a longer conversation shares the shorter one's
// prefix up to the moved cache breakpoint (what a fork relies on).
func TestRequestDeterministic(t *testing.T) {
	srv := modeltest.NewAnthropic(t, modeltest.Reply{Text: "a"}, modeltest.Reply{Text: "b"}, modeltest.Reply{Text: "c"})
	m := newModel(t, srv)
	for range 2 {
		if r := providertest.Stream(m, conversation()); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	longer := conversation()
	longer.Messages = append(longer.Messages,
		model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "summary"}}},
		model.UserText("and then?"))
	if r := providertest.Stream(m, longer); r.Err != nil {
		t.Fatal(r.Err)
	}
	recs := srv.Requests()
	if !bytes.Equal(recs[0].Body, recs[1].Body) {
		t.Fatalf("same request, different bodies:\n%s\n%s", recs[0].Body, recs[1].Body)
	}
	var short, long wireRequest
	if err := json.Unmarshal(recs[0].Body, &short); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(recs[2].Body, &long); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(short.System, long.System) || !bytes.Equal(short.Tools, long.Tools) {
		t.Errorf("system or tools changed as the conversation grew")
	}
	// The cached prefix is every block of the shorter request; only where
	// the breakpoint markers sit may differ.
	unmark := func(b []byte) []byte {
		return bytes.Replace(b, []byte(`,"cache_control":{"type":"ephemeral"}`), nil, 1)
	}
	for i, msg := range short.Messages {
		for j, blk := range msg.Content {
			if got := long.Messages[i].Content[j]; !bytes.Equal(unmark(blk), unmark(got)) {
				t.Errorf("message %d block %d changed: %s -> %s", i, j, blk, got)
			}
		}
	}
}
