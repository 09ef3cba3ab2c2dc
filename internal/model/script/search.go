package script

import (
	"encoding/json"
	"fmt"

	"github.com/broodhq/brood/internal/model"
)

// Search is a step's web search, run "at the provider" as Anthropic's
// server tool runs it: the reply holds a server_tool_use part, its
// web_search_tool_result and a text part citing the first result, in the
// Messages API's block shapes (Part.Raw). The script's model must list
// web_search in `server_tools`, and the request must offer it; else the
// step says that no search was offered instead.
type Search struct {
	Query   string         `yaml:"query"`
	Results []SearchResult `yaml:"results,omitempty"`
	// Cited is the text that cites the first result.
	Cited string `yaml:"cited,omitempty"`
}

// SearchResult is one page a scripted search found.
type SearchResult struct {
	Title string `yaml:"title"`
	URL   string `yaml:"url"`
}

// ServerTools implements model.ServerTools: the kinds the script's
// `server_tools` lists.
func (m *Model) ServerTools() []string { return m.file.ServerTools }

// searchOffered reports whether req offers the web search server tool.
func searchOffered(req *model.Request) bool {
	for _, t := range req.Tools {
		if t.Server != nil && t.Server.Kind == model.ServerToolWebSearch {
			return true
		}
	}
	return false
}

// searchParts renders s as the provider's blocks; id names the search.
func searchParts(s *Search, id string) []model.Part {
	input, _ := json.Marshal(map[string]string{"query": s.Query})
	use, _ := json.Marshal(map[string]any{"type": "server_tool_use", "id": id, "name": "web_search", "input": json.RawMessage(input)})
	results := []any{}
	summary := ""
	for i, r := range s.Results {
		results = append(results, map[string]any{"type": "web_search_result", "url": r.URL, "title": r.Title,
			"encrypted_content": fmt.Sprintf("script-%s-%d", id, i)})
		if summary != "" {
			summary += "\n"
		}
		summary += fmt.Sprintf("%s <%s>", r.Title, r.URL)
	}
	if summary == "" {
		summary = "no results"
	}
	res, _ := json.Marshal(map[string]any{"type": "web_search_tool_result", "tool_use_id": id, "content": results})
	parts := []model.Part{
		{Type: model.PartServerToolUse, ID: id, Name: "web_search", Input: input, Raw: use},
		{Type: model.PartWebSearchResult, ToolUseID: id, Text: summary, Raw: res},
	}
	if s.Cited != "" {
		text := map[string]any{"type": "text", "text": s.Cited}
		if len(s.Results) > 0 {
			text["citations"] = []any{map[string]any{"type": "web_search_result_location", "url": s.Results[0].URL,
				"title": s.Results[0].Title, "encrypted_index": "script-" + id, "cited_text": s.Cited}}
		}
		raw, _ := json.Marshal(text)
		parts = append(parts, model.Part{Type: model.PartText, Text: s.Cited, Raw: raw})
	}
	return parts
}
