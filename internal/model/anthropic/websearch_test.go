package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

func searchReply() modeltest.Reply {
	return modeltest.Reply{
		Text: "Let me look that up.",
		Search: &modeltest.Search{ID: "srvtoolu_01", Query: "go 1.26 release date",
			Results: []modeltest.SearchResult{{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26"}, {Title: "Go blog", URL: "https://go.dev/blog"}},
			Cited:   "Go 1.26 was released in February 2026."},
		Usage: model.Usage{Input: 40, Output: 12, WebSearches: 1},
	}
}

// TestWebSearchServerTool: a WebSearch spec goes out as Anthropic's
// web_search_20250305 tool with its domains; the reply's server_tool_use,
// web_search_tool_result and cited text come back as parts (each server
// block also as a Block chunk, in order with the text), the usage counts the
// search, and the next request sends all three blocks back verbatim.
func TestWebSearchServerTool(t *testing.T) {
	srv := modeltest.NewAnthropic(t, searchReply(), modeltest.Reply{Text: "Done."})
	m := newModel(t, srv)
	if !model.OffersServerTool(m, model.ServerToolWebSearch) {
		t.Fatal("the Anthropic model does not offer web_search")
	}
	req := &model.Request{
		Messages: []model.Message{model.UserText("When was Go 1.26 released?")},
		Tools: []model.ToolSpec{{Name: "WebSearch", Server: &model.ServerTool{Kind: model.ServerToolWebSearch, MaxUses: 5, AllowedDomains: []string{"go.dev"}}},
			{Name: "Read", Description: "read", Schema: json.RawMessage(`{"type":"object"}`)}},
	}
	var order []string
	var resp *model.Response
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.TextDelta != "":
			order = append(order, "text")
		case c.Block != nil:
			order = append(order, string(c.Block.Type))
		case c.Done != nil:
			resp = c.Done
		}
	}
	if resp == nil {
		t.Fatal("no response")
	}
	got := strings.Join(compact(order), ",")
	if want := "text,server_tool_use,web_search_tool_result,text"; got != want {
		t.Errorf("chunk order = %s, want %s", got, want)
	}
	tools := srv.Requests()[0].JSON(t)["tools"].([]any)
	ws := tools[0].(map[string]any)
	if ws["type"] != "web_search_20250305" || ws["name"] != "web_search" || ws["max_uses"] != float64(5) ||
		len(ws["allowed_domains"].([]any)) != 1 || ws["input_schema"] != nil {
		t.Errorf("web search tool = %v", ws)
	}
	parts := resp.Message.Content
	if len(parts) != 4 {
		t.Fatalf("parts = %+v, want text, server_tool_use, web_search_tool_result, cited text", parts)
	}
	if p := parts[1]; p.Type != model.PartServerToolUse || p.ID != "srvtoolu_01" || p.Name != "web_search" || string(p.Input) != `{"query":"go 1.26 release date"}` {
		t.Errorf("server_tool_use part = %+v", p)
	}
	if p := parts[2]; p.Type != model.PartWebSearchResult || p.ToolUseID != "srvtoolu_01" || !strings.Contains(p.Text, "Go 1.26 Release Notes <https://go.dev/doc/go1.26>") {
		t.Errorf("web_search_tool_result part = %+v", p)
	}
	if p := parts[3]; p.Type != model.PartText || p.Text != "Go 1.26 was released in February 2026." || !strings.Contains(string(p.Raw), "web_search_result_location") {
		t.Errorf("cited text part = %+v", p)
	}
	if len(resp.Message.ToolUses()) != 0 {
		t.Errorf("a server tool call is a tool use for the loop: %+v", resp.Message.ToolUses())
	}
	if resp.Usage.WebSearches != 1 {
		t.Errorf("usage = %+v, want 1 web search", resp.Usage)
	}

	// The next turn sends the blocks back as they came.
	req.Messages = append(req.Messages, resp.Message, model.UserText("Thanks."))
	if _, err := model.Collect(context.Background(), m, req, nil); err != nil {
		t.Fatal(err)
	}
	sent := srv.Requests()[1].JSON(t)["messages"].([]any)[1].(map[string]any)["content"].([]any)
	if len(sent) != 4 {
		t.Fatalf("replayed content = %v", sent)
	}
	use, res, cited := sent[1].(map[string]any), sent[2].(map[string]any), sent[3].(map[string]any)
	if use["type"] != "server_tool_use" || use["id"] != "srvtoolu_01" || use["name"] != "web_search" || use["input"].(map[string]any)["query"] != "go 1.26 release date" {
		t.Errorf("replayed server_tool_use = %v", use)
	}
	results := res["content"].([]any)
	if res["type"] != "web_search_tool_result" || res["tool_use_id"] != "srvtoolu_01" || len(results) != 2 ||
		results[0].(map[string]any)["encrypted_content"] != "EqgfCioIARgBIiQ0-https://go.dev/doc/go1.26" {
		t.Errorf("replayed web_search_tool_result = %v", res)
	}
	cites, _ := cited["citations"].([]any)
	if cited["type"] != "text" || len(cites) != 1 || cites[0].(map[string]any)["encrypted_index"] == nil {
		t.Errorf("replayed cited text = %v", cited)
	}
}

// TestWebSearchErrorResult: a search the provider could not run comes back
// as a result naming its error code, and still replays.
func TestWebSearchErrorResult(t *testing.T) {
	srv := modeltest.NewAnthropic(t, modeltest.Reply{Search: &modeltest.Search{ID: "srvtoolu_02", Query: "x", ErrorCode: "max_uses_exceeded"}, Text: "No luck."}, modeltest.Reply{Text: "ok"})
	m := newModel(t, srv)
	req := &model.Request{Messages: []model.Message{model.UserText("search")}, Tools: []model.ToolSpec{{Name: "WebSearch", Server: &model.ServerTool{Kind: model.ServerToolWebSearch}}}}
	resp, err := model.Collect(context.Background(), m, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res model.Part
	for _, p := range resp.Message.Content {
		if p.Type == model.PartWebSearchResult {
			res = p
		}
	}
	if res.Text != "web search failed: max_uses_exceeded" {
		t.Errorf("error result = %+v", res)
	}
	req.Messages = append(req.Messages, resp.Message, model.UserText("again"))
	if _, err := model.Collect(context.Background(), m, req, nil); err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, `"error_code":"max_uses_exceeded"`) {
		t.Errorf("the error result was not sent back: %s", body)
	}
}

// TestServerToolRefusals: a server tool Anthropic does not run, or web
// search with both domain lists, is refused before any request.
func TestServerToolRefusals(t *testing.T) {
	for _, tt := range []struct {
		st   model.ServerTool
		want string
	}{
		{model.ServerTool{Kind: "code_execution"}, "not offered"},
		{model.ServerTool{Kind: model.ServerToolWebSearch, AllowedDomains: []string{"a"}, BlockedDomains: []string{"b"}}, "not both"},
	} {
		_, err := buildParams(Config{Model: "claude-sonnet-4-5"}, &model.Request{Tools: []model.ToolSpec{{Name: "X", Server: &tt.st}}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want %q", tt.st, err, tt.want)
		}
	}
}

// compact folds runs of text chunks into one.
func compact(s []string) []string {
	var out []string
	for _, x := range s {
		if x == "text" && len(out) > 0 && out[len(out)-1] == "text" {
			continue
		}
		out = append(out, x)
	}
	return out
}
