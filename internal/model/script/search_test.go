package script

import (
	"context"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

// TestScriptSearch: a script whose model runs web_search answers a step's
// search with the provider's blocks (server_tool_use, its result, cited
// text) in order with its text, counts the search, and says so when the
// request offered no search; a script without server_tools offers none.
func TestScriptSearch(t *testing.T) {
	f, err := Parse("s.yaml", []byte(`server_tools: [web_search]
agents:
  root:
    - say: "Looking. "
      search:
        query: go release
        results: [{title: Go, url: "https://go.dev"}]
        cited: Go is out.
`))
	if err != nil {
		t.Fatal(err)
	}
	m := New("script:s.yaml", f)
	if !model.OffersServerTool(m, model.ServerToolWebSearch) {
		t.Fatal("the script's model does not offer web_search")
	}
	ws := model.ToolSpec{Name: "WebSearch", Server: &model.ServerTool{Kind: model.ServerToolWebSearch}}
	for _, tt := range []struct {
		tools []model.ToolSpec
		order string
		text  string
		n     int64
	}{
		{[]model.ToolSpec{ws}, "text server_tool_use web_search_tool_result text", "Looking. Go is out.", 1},
		{nil, "text", "Looking. (no web search was offered)", 0},
	} {
		var order []string
		var resp *model.Response
		for c, err := range m.Stream(context.Background(), &model.Request{Agent: "root", Tools: tt.tools, Messages: []model.Message{model.UserText("is go out?")}}) {
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.Block != nil:
				order = append(order, string(c.Block.Type))
			case c.TextDelta != "" && (len(order) == 0 || order[len(order)-1] != "text"):
				order = append(order, "text")
			case c.Done != nil:
				resp = c.Done
			}
		}
		if got := strings.Join(order, " "); got != tt.order || resp.Message.Text() != tt.text || resp.Usage.WebSearches != tt.n {
			t.Errorf("order %q text %q searches %d; want %q %q %d", got, resp.Message.Text(), resp.Usage.WebSearches, tt.order, tt.text, tt.n)
		}
	}
	plain, _ := Parse("p.yaml", []byte("agents:\n  root:\n    - say: hi\n"))
	if model.OffersServerTool(New("script:p.yaml", plain), model.ServerToolWebSearch) {
		t.Error("a script without server_tools offers web_search")
	}
	if _, err := Parse("b.yaml", []byte("server_tools: [code_execution]\nagents:\n  root: [{say: hi}]\n")); err == nil || !strings.Contains(err.Error(), "use web_search") {
		t.Errorf("unknown server tool: %v", err)
	}
}
