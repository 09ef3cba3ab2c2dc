package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/broodhq/brood/internal/model"
)

// ServerTools names the tools Anthropic runs on its side for brood: its web
// search (web_search_20250305).
func (m *Model) ServerTools() []string { return []string{model.ServerToolWebSearch} }

// serverTool is the request's tool for a server tool spec.
func serverTool(t model.ToolSpec) (sdk.ToolUnionParam, error) {
	s := t.Server
	if s.Kind != model.ServerToolWebSearch {
		return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: server tool %s of kind %q is not offered by Anthropic", t.Name, s.Kind)
	}
	if len(s.AllowedDomains) > 0 && len(s.BlockedDomains) > 0 {
		return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: web search takes allowed or blocked domains, not both")
	}
	ws := sdk.WebSearchTool20250305Param{AllowedDomains: s.AllowedDomains, BlockedDomains: s.BlockedDomains}
	if s.MaxUses > 0 {
		ws.MaxUses = sdk.Int(int64(s.MaxUses))
	}
	return sdk.ToolUnionParam{OfWebSearchTool20250305: &ws}, nil
}

// rawBlock is a block kept verbatim (Part.Raw) as the request sends it
// back: decoded as the response block it was, then turned into its param
// by the SDK (which keeps what the API wants back: ids, encrypted
// contents, citations).
func rawBlock(part model.Part) (sdk.ContentBlockParamUnion, error) {
	var b sdk.ContentBlockUnion
	if err := b.UnmarshalJSON(part.Raw); err != nil || b.Type != string(part.Type) {
		return sdk.ContentBlockParamUnion{}, fmt.Errorf("anthropic: a stored %s block is not valid: the session is corrupt", part.Type)
	}
	return b.ToParam(), nil
}

// serverPart converts a server tool block or a cited text block of a
// response; ok is false for any other block.
func serverPart(b sdk.ContentBlockUnion) (model.Part, bool) {
	raw := json.RawMessage(b.RawJSON())
	switch b.Type {
	case "server_tool_use":
		input := b.Input
		if len(input) == 0 || !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		return model.Part{Type: model.PartServerToolUse, ID: b.ID, Name: string(b.Name), Input: append(json.RawMessage(nil), input...), Raw: raw}, true
	case "web_search_tool_result":
		return model.Part{Type: model.PartWebSearchResult, ToolUseID: b.ToolUseID, Text: searchSummary(b.Content), Raw: raw}, true
	case "text":
		if len(b.Citations) > 0 {
			return model.Part{Type: model.PartText, Text: b.Text, Raw: raw}, true
		}
	}
	return model.Part{}, false
}

// searchSummary is a search result's readable form: one line per page
// (title and URL), or the error code.
func searchSummary(c sdk.WebSearchToolResultBlockContentUnion) string {
	if c.ErrorCode != "" {
		return "web search failed: " + string(c.ErrorCode)
	}
	var b strings.Builder
	for _, r := range c.OfWebSearchResultBlockArray {
		fmt.Fprintf(&b, "%s <%s>\n", r.Title, r.URL)
	}
	if b.Len() == 0 {
		return "no results"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
