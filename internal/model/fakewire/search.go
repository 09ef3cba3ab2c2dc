package fakewire

// Search is a scripted server-side web search (Anthropic's web_search
// tool): the reply carries its server_tool_use block, its
// web_search_tool_result block and then Cited, a text block citing the
// first result. OpenAI-compatible replies ignore it (Chat Completions has
// no server tool).
type Search struct {
	ID      string // the server_tool_use id (srvtoolu_...)
	Query   string
	Results []SearchResult
	// ErrorCode makes the result an error (max_uses_exceeded, ...)
	// instead of Results.
	ErrorCode string
	// Cited is the text of the block that cites the first result.
	Cited string
}

// SearchResult is one page a search found.
type SearchResult struct {
	Title string
	URL   string
}

// writeSearch streams s's blocks from index on and returns the next index.
func writeSearch(st *sse, index int, s *Search) int {
	start := func(block map[string]any) {
		st.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": block})
	}
	delta := func(d map[string]any) {
		st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
	}
	stop := func() {
		st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	start(map[string]any{"type": "server_tool_use", "id": s.ID, "name": "web_search", "input": map[string]any{}})
	for _, p := range pieces(`{"query":` + quote(s.Query) + `}`) {
		delta(map[string]any{"type": "input_json_delta", "partial_json": p})
	}
	stop()
	var content any
	if s.ErrorCode != "" {
		content = map[string]any{"type": "web_search_tool_result_error", "error_code": s.ErrorCode}
	} else {
		results := []any{}
		for i, r := range s.Results {
			results = append(results, map[string]any{"type": "web_search_result", "url": r.URL, "title": r.Title,
				"encrypted_content": encrypted(i, r.URL), "page_age": "April 30, 2025"})
		}
		content = results
	}
	start(map[string]any{"type": "web_search_tool_result", "tool_use_id": s.ID, "content": content})
	stop()
	if s.Cited == "" {
		return index
	}
	start(map[string]any{"type": "text", "text": ""})
	if len(s.Results) > 0 {
		delta(map[string]any{"type": "citations_delta", "citation": map[string]any{
			"type": "web_search_result_location", "url": s.Results[0].URL, "title": s.Results[0].Title,
			"encrypted_index": encrypted(0, "index"), "cited_text": s.Cited}})
	}
	for _, p := range words(s.Cited) {
		delta(map[string]any{"type": "text_delta", "text": p})
	}
	stop()
	return index
}

// encrypted stands for the provider's opaque encrypted_content: a fixed
// string per result, so tests can see it come back verbatim.
func encrypted(i int, what string) string {
	return "EqgfCioIARgBIiQ" + itoa(i) + "-" + what
}
