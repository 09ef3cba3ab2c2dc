package render

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/spend"
	"github.com/broodhq/brood/internal/tool"
)

var reTTFT = regexp.MustCompile(`"(ttft_ms|ttft_stream_ms|first_content_frame_ms)":[0-9]+`)

// searchRun runs the real agent loop on the real Anthropic adapter
// against a loopback Messages API that searches the web in its first turn
// (server_tool_use, web_search_tool_result, a cited text block) within
// its one answer, and returns what Headless wrote for it.
func searchRun(t *testing.T, stream bool) string {
	t.Helper()
	srv := modeltest.NewAnthropic(t,
		modeltest.Reply{Text: "Let me search. ", Usage: model.Usage{Input: 300, Output: 40, WebSearches: 1},
			Search: &modeltest.Search{ID: "srvtoolu_01", Query: "go 1.26 release",
				Results: []modeltest.SearchResult{{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26"}}, Cited: "Go 1.26 is out."}},
	)
	m, err := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5", APIKey: "k", BaseURL: srv.URL, HTTPClient: srv.Client(), RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	perms, _ := tool.NewPermissions("default", []string{"WebSearch"}, nil, nil)
	root := t.TempDir()
	session := filepath.Join(root, ".brood/sessions/01KBN5Q7MZ8XRTSESSIONSESS2.jsonl")
	var out buf
	h := NewHeadless(&out, stream)
	h.Start(Info{SessionPath: session, Cwd: root, Model: m.Name(), Tools: []string{"Read", "WebSearch"}, PermissionMode: "default", Root: root, APIKeySource: "ANTHROPIC_API_KEY"})
	var o *agent.Outcome
	cfg := agent.Config{Name: "root", Model: m, Tools: tool.NewSet(&tool.Read{}, &tool.WebSearch{}), Env: &tool.Env{Dir: root, Perms: perms}}
	for ev, err := range agent.Run(context.Background(), cfg, nil, "Is Go 1.26 out?") {
		if err != nil {
			t.Fatal(err)
		}
		h.Event(ev)
		if ev.Outcome != nil {
			o = ev.Outcome
		}
	}
	ledger := spend.Ledger{}
	ledger.Add(m.Name(), o.Usage)
	h.Done(o, session, Totals{Models: ledger, Cost: ledger.Cost(price.Default())})
	return reTTFT.ReplaceAllString(normalise(out.String(), root), `"$1":<ms>`)
}

// TestStreamGoldenWebSearch: a run whose model searched the web at the
// provider, in stream-json and json, against testdata/websearch.txtar (go
// test ./internal/cli/render -run TestStreamGoldenWebSearch -update
// rewrites it): the server_tool_use and web_search_tool_result blocks are
// assistant lines of their own, in order with the text, no tool_result
// line answers them, and the result counts the search
// (usage.server_tool_use.web_search_requests, modelUsage's
// webSearchRequests) and prices it.
func TestStreamGoldenWebSearch(t *testing.T) {
	path := filepath.Join("testdata", "websearch.txtar")
	got := &txtar.Archive{
		Comment: []byte("stream-json and json output of a run that searched the web through Anthropic's server tool (TestStreamGoldenWebSearch).\nRegenerate with: go test ./internal/cli/render -run TestStreamGoldenWebSearch -update\n"),
		Files: []txtar.File{
			{Name: "stream-json.jsonl", Data: []byte(searchRun(t, true))},
			{Name: "json.json", Data: []byte(searchRun(t, false))},
		},
	}
	if *update {
		if err := os.WriteFile(path, txtar.Format(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Files) != len(got.Files) {
		t.Fatalf("%s has %d files, want %d (run with -update)", path, len(want.Files), len(got.Files))
	}
	for i, f := range got.Files {
		if w := want.Files[i]; w.Name != f.Name || string(w.Data) != string(f.Data) {
			t.Errorf("%s changed (run with -update if that is intended):\ngot:\n%s\nwant:\n%s", f.Name, f.Data, w.Data)
		}
	}
	stream := string(got.Files[0].Data)
	for _, want := range []string{`{"id":"srvtoolu_01","input":{"query":"go 1.26 release"},"name":"web_search","type":"server_tool_use"}`,
		`"tool_use_id":"srvtoolu_01","type":"web_search_tool_result"}`, `"result":"Let me search. Go 1.26 is out."`,
		`"server_tool_use":{"web_search_requests":1,`, `"webSearchRequests":1,`} {
		if !strings.Contains(stream, want) {
			t.Errorf("stream-json lacks %s", want)
		}
	}
	if strings.Contains(stream, `"tool_result"`) {
		t.Error("a tool_result line answers the provider's search")
	}
}

// TestTextWebSearch: in text mode the provider's search is a step on
// stderr (its query, marked as run at the provider; its result block
// shows nothing), the answer is on stdout, and the summary counts the
// searches, the subagents' included.
func TestTextWebSearch(t *testing.T) {
	var out, errOut buf
	r := NewText(&out, &errOut, false)
	r.Event(agent.Event{Type: agent.EvTurn, Turn: 1})
	r.Event(agent.Event{Type: agent.EvText, Text: "Let me search."})
	use := model.Part{Type: model.PartServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: []byte(`{"query":"go release"}`)}
	r.Event(agent.Event{Type: agent.EvServerTool, Tool: "WebSearch", ToolID: "srvtoolu_1", Input: use.Input, Part: &use})
	res := model.Part{Type: model.PartWebSearchResult, ToolUseID: "srvtoolu_1", Text: "Go <https://go.dev>"}
	r.Event(agent.Event{Type: agent.EvServerTool, Tool: "WebSearch", ToolID: "srvtoolu_1", Part: &res})
	r.Event(agent.Event{Type: agent.EvText, Text: "Go is out."})
	o := &agent.Outcome{Status: agent.StatusDone, Text: "Go is out.", Turns: 1, Usage: model.Usage{Input: 10, Output: 5, WebSearches: 1}}
	r.Event(agent.Event{Type: agent.EvDone, Outcome: o})
	r.Done(o, "/p/s.jsonl", Totals{Children: model.Usage{Input: 1, WebSearches: 2}})
	want := "· Let me search.\n  ▸ WebSearch go release (at the provider)\n"
	if out.String() != "Go is out.\n" || !strings.HasPrefix(errOut.String(), want) || !strings.Contains(errOut.String(), " · web searches 3") {
		t.Errorf("stdout %q\nstderr %q", out.String(), errOut.String())
	}
}

// TestSubagentSearchBlocks: a subagent's search blocks, read from its
// transcript, go out in its stream-json lines as they were; a block that
// is not an object of its part's type (a hostile child wrote it) is left
// out.
func TestSubagentSearchBlocks(t *testing.T) {
	use := `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}`
	got := blocks([]model.Part{
		{Type: model.PartText, Text: "Looking."},
		{Type: model.PartServerToolUse, ID: "srvtoolu_1", Raw: []byte(use)},
		{Type: model.PartWebSearchResult, ToolUseID: "srvtoolu_1", Raw: []byte(`{"type":"tool_use","id":"x","name":"Bash","input":{}}`)},
		{Type: model.PartWebSearchResult, ToolUseID: "srvtoolu_1", Raw: []byte(`"web_search_tool_result"`)},
		{Type: model.PartServerToolUse, ID: "srvtoolu_2"},
	})
	b, _ := json.Marshal(got)
	if want := `[{"type":"text","text":"Looking."},` + use + `]`; string(b) != want {
		t.Errorf("blocks = %s\nwant %s", b, want)
	}
}
