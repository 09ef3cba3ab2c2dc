package agent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/model/openai"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/tool"
)

// TestWebSearchLoop drives the loop with the real Anthropic adapter
// against a loopback Messages API: the first turn searches (server_tool_use,
// web_search_tool_result, cited text) and pauses (pause_turn), the second
// calls a local tool, the third answers. The search is sent as the server
// tool with the rule's domain, its blocks come out as server_tool events
// and are never run here, every later request sends them back, the
// transcript keeps them, and the usage counts the search.
func TestWebSearchLoop(t *testing.T) {
	srv := modeltest.NewAnthropic(t,
		modeltest.Reply{Text: "Let me search.", StopReason: "pause_turn", Usage: model.Usage{Input: 30, Output: 10, WebSearches: 1},
			Search: &modeltest.Search{ID: "srvtoolu_01", Query: "go release", Results: []modeltest.SearchResult{{Title: "Go 1.26", URL: "https://go.dev/doc/go1.26"}}, Cited: "Go 1.26 is out."}},
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_01", Name: "Echo", Input: `{"x":1}`}}},
		modeltest.Reply{Text: "Done."},
	)
	m, err := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5", APIKey: "k", BaseURL: srv.URL, HTTPClient: srv.Client(), RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	perms, err := tool.NewPermissions("default", []string{"WebSearch(domain:go.dev)", "Echo"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tw, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{Name: "root", Model: m, Tools: tool.NewSet(echoTool("Echo"), &tool.WebSearch{}),
		Env: &tool.Env{Dir: t.TempDir(), Perms: perms}, Transcript: tw}
	evs, out, err := collect(t, context.Background(), cfg, nil, "Is Go 1.26 out?")
	if err != nil || out.Status != agent.StatusDone {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	if out.Usage.WebSearches != 1 {
		t.Errorf("usage = %+v, want one search", out.Usage)
	}
	var server []string
	for _, e := range evs {
		switch e.Type {
		case agent.EvServerTool:
			server = append(server, e.Tool+":"+string(e.Part.Type)+":"+e.ToolID)
		case agent.EvToolCall:
			if e.Tool != "Echo" {
				t.Errorf("the loop ran %s", e.Tool)
			}
		case agent.EvNote:
			t.Errorf("note %q", e.Text)
		}
	}
	if got := strings.Join(server, " "); got != "WebSearch:server_tool_use:srvtoolu_01 WebSearch:web_search_tool_result:srvtoolu_01" {
		t.Errorf("server tool events = %s", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if b := string(reqs[0].Body); !strings.Contains(b, `{"max_uses":8,"allowed_domains":["go.dev"],"name":"web_search","type":"web_search_20250305"}`) {
		t.Errorf("first request's tools: %s", b)
	}
	// After the pause the request ends with the paused assistant turn; both
	// later requests carry the search blocks back.
	var first struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Body, &first); err != nil {
		t.Fatal(err)
	}
	if last := first.Messages[len(first.Messages)-1]; last.Role != "assistant" || len(last.Content) != 4 {
		t.Errorf("the paused turn was not sent back as it was: %s", reqs[1].Body)
	}
	for _, r := range reqs[1:] {
		b := string(r.Body)
		for _, want := range []string{`"type":"server_tool_use"`, `"id":"srvtoolu_01"`, `"type":"web_search_tool_result"`, `"encrypted_content":"EqgfCioIARgBIiQ0-https://go.dev/doc/go1.26"`, `"type":"web_search_result_location"`} {
			if !strings.Contains(b, want) {
				t.Errorf("request %d lacks %s", r.N, want)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sawBlocks, sawSearchUsage bool
	for _, rec := range recs {
		if rec.Type == session.RecToolCall && rec.Tool != "Echo" {
			t.Errorf("transcript tool call %s", rec.Tool)
		}
		if rec.Message != nil {
			for _, p := range rec.Message.Content {
				if p.Type == model.PartWebSearchResult && strings.Contains(string(p.Raw), "encrypted_content") && p.Text == "Go 1.26 <https://go.dev/doc/go1.26>" {
					sawBlocks = true
				}
			}
		}
		if rec.Usage != nil && rec.Usage.WebSearches == 1 {
			sawSearchUsage = true
		}
	}
	if !sawBlocks || !sawSearchUsage {
		t.Errorf("transcript: blocks %v, search usage %v", sawBlocks, sawSearchUsage)
	}
}

// TestWebSearchNotOffered: on a model whose provider runs no search the
// run goes on without WebSearch, saying so once in a note (an event and a
// transcript record) before the first turn; the tool is not in the request.
func TestWebSearchNotOffered(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Reply{Text: "ok"})
	m, err := openai.New(openai.Config{Model: "gpt-4.1", APIKey: "k", BaseURL: srv.URL, HTTPClient: srv.Client(), RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tw, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	perms, _ := tool.NewPermissions("default", []string{"WebSearch"}, nil, nil)
	cfg := agent.Config{Name: "root", Model: m, Tools: tool.NewSet(echoTool("Echo"), &tool.WebSearch{}), Env: &tool.Env{Perms: perms}, Transcript: tw}
	evs, out, err := collect(t, context.Background(), cfg, nil, "hi")
	if err != nil || out.Status != agent.StatusDone {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	if count(evs, agent.EvNote) != 1 || evs[0].Type != agent.EvNote || evs[0].Text != tool.NoServerSearch {
		t.Errorf("events %+v", evs)
	}
	if b := string(srv.Requests()[0].Body); strings.Contains(b, "WebSearch") || !strings.Contains(b, "Echo") {
		t.Errorf("request tools: %s", b)
	}
	_ = tw.Close()
	recs, _, _ := session.ReadFile(path)
	notes := 0
	for _, r := range recs {
		if r.Type == session.RecNote && r.Text == tool.NoServerSearch {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d note records, want 1", notes)
	}
}
