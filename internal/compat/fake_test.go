package compat_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// The fake model both programs talk to answers by cues in the user's
// prompt, so one responder serves Claude Code and brood alike, whatever
// else each sends (Claude Code's side requests get "Hello."):
//
//	MOCK-K=N          call the subagent tool (Agent, or brood's Task) N times, then sum up
//	MOCK-SUBAGENT     (a subagent's prompt, or brood's subagent's system prompt) answer with a report
//	MOCK-BASH=CMD     call Bash with CMD, then say whether it ran or was refused
//	MOCK-TOOL=NAME    call the tool NAME with {"text":"hi"}, then say how it went
//	MOCK-WRITE=FILE   call Write on FILE (relative to the project), then say how it went
//	MOCK-LOOP         call Bash (git log) at every turn: the turn cap ends it
//	MOCK-SYSTEM=WORD  say whether the system prompt holds WORD
//	MOCK-MODEL        say which model was asked for
//	MOCK-HAS=WORD     say whether the prompt's message holds WORD
//	MOCK-RECALL=WORD  say whether WORD is in the conversation before the prompt
//	MOCK-ERROR        answer 400 invalid_request_error (no retry)
//	MOCK-SCHEMA       answer {"answer":"hello"} (through a StructuredOutput tool when offered)
//	MOCK-SEARCH       search the web: with the provider's web_search tool offered (brood),
//	                  search and answer citing it; else call Claude Code's WebSearch
//	                  (through ToolSearch, as it is deferred), then answer. A request
//	                  whose one tool is web_search (Claude Code's own search) searches.

type request struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func blocksOf(raw json.RawMessage) []block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

func textOf(raw json.RawMessage) string {
	var b strings.Builder
	for _, bl := range blocksOf(raw) {
		if bl.Type == "text" {
			b.WriteString(bl.Text + "\n")
		}
	}
	return b.String()
}

var cueRe = regexp.MustCompile(`MOCK-([A-Z]+)(?:=(\S+))?`)

// respond is the fake model. root is the project directory (Write needs an
// absolute path in Claude Code).
func respond(root string) modeltest.Responder {
	return func(rec modeltest.Recorded) modeltest.Reply {
		var req request
		if json.Unmarshal(rec.Body, &req) != nil {
			return modeltest.Reply{Text: "Hello."}
		}
		if len(req.Tools) == 1 && req.Tools[0].Name == "web_search" {
			return searched("")
		}
		t := turnOf(req, root)
		if t.cue == "" {
			return modeltest.Reply{Text: "Hello."}
		}
		return t.reply()
	}
}

// turn is one request as the fake model reads it: the cue of the latest
// user text that has one (at: its message), and the tool results after it.
type turn struct {
	req      request
	root     string
	at       int
	cue, arg string
	results  []block
}

func turnOf(req request, root string) turn {
	t := turn{req: req, root: root, at: -1}
	for i, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		if c := cueRe.FindAllStringSubmatch(textOf(m.Content), -1); c != nil {
			t.at, t.cue, t.arg = i, c[len(c)-1][1], c[len(c)-1][2]
		}
	}
	if strings.Contains(string(req.System), "MOCK-SUBAGENT") {
		t.cue = "SUBAGENT" // brood's subagents have their brief in the system prompt
	}
	for _, m := range req.Messages[max(t.at, 0):] {
		for _, bl := range blocksOf(m.Content) {
			if bl.Type == "tool_result" {
				t.results = append(t.results, bl)
			}
		}
	}
	return t
}

func (t turn) offered(name string) bool {
	for _, tl := range t.req.Tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// call calls the tool name with input, once (then ran says how it went).
func (t turn) call(name, input string) modeltest.Reply {
	if !t.offered(name) {
		return modeltest.Reply{Text: "Hello."}
	}
	return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: fmt.Sprintf("toolu_%s_%d", strings.ToLower(name), len(t.req.Messages)), Name: name, Input: input}}}
}

func (t turn) ran(what string) modeltest.Reply {
	if t.results[0].IsError {
		return modeltest.Reply{Text: what + " was refused."}
	}
	return modeltest.Reply{Text: what + " ran."}
}

// once calls the tool on the cue's first turn, and then says how it went.
func (t turn) once(name, input string) modeltest.Reply {
	if len(t.results) == 0 {
		return t.call(name, input)
	}
	return t.ran(name)
}

func (t turn) reply() modeltest.Reply {
	switch t.cue {
	case "K":
		return subagents(t, t.arg)
	case "SUBAGENT":
		return modeltest.Reply{Text: "Subagent report: the README describes a tiny fixture."}
	case "BASH":
		return t.once("Bash", jsonObj("command", strings.ReplaceAll(t.arg, "_", " "), "description", "Run a command"))
	case "TOOL":
		return t.once(t.arg, `{"text":"hi"}`)
	case "WRITE":
		return t.once("Write", jsonObj("file_path", t.root+"/"+t.arg, "content", "written\n"))
	case "LOOP":
		return t.call("Bash", jsonObj("command", "git log --oneline -1", "description", "Show the last commit"))
	case "SYSTEM":
		return modeltest.Reply{Text: "The system prompt " + has(strings.Contains(string(t.req.System), t.arg)) + " " + t.arg + "."}
	case "MODEL":
		return modeltest.Reply{Text: "The model is " + t.req.Model + "."}
	case "HAS":
		return modeltest.Reply{Text: "The prompt " + has(strings.Contains(textOf(t.req.Messages[t.at].Content), strings.ReplaceAll(t.arg, "_", " "))) + " " + t.arg + "."}
	case "RECALL":
		var before strings.Builder
		for _, m := range t.req.Messages[:t.at] {
			before.WriteString(textOf(m.Content))
		}
		return modeltest.Reply{Text: "The conversation " + has(strings.Contains(before.String(), t.arg)) + " " + t.arg + "."}
	case "ERROR":
		return modeltest.Reply{Status: 400, ErrorMessage: "MOCK-ERROR: the request was refused"}
	case "SEARCH":
		return t.search()
	case "SCHEMA":
		if t.offered("StructuredOutput") && len(t.results) == 0 {
			return t.call("StructuredOutput", `{"answer":"hello"}`)
		}
		return modeltest.Reply{Text: `{"answer":"hello"}`}
	}
	return modeltest.Reply{Text: "Hello."}
}

// searched is a reply that searches the web at the provider (the server
// tool's blocks) and then says text, citing the result.
func searched(text string) modeltest.Reply {
	return modeltest.Reply{Text: text, Usage: model.Usage{Input: 50, Output: 10, WebSearches: 1},
		Search: &modeltest.Search{ID: "srvtoolu_mock", Query: "go release",
			Results: []modeltest.SearchResult{{Title: "Go", URL: "https://go.dev/doc/devel/release"}}, Cited: "Go is out."}}
}

// search answers MOCK-SEARCH. brood offers the provider's web_search
// tool: one answer searches and says what it found. Claude Code offers
// its WebSearch tool (deferred: ToolSearch loads it), which makes its own
// request with web_search; its result comes back as a tool result.
func (t turn) search() modeltest.Reply {
	switch {
	case t.offered("web_search"):
		return searched("")
	case len(t.results) > 0 && strings.Contains(string(t.results[len(t.results)-1].Content), "Web search results"):
		return modeltest.Reply{Text: "Go is out."}
	case t.offered("WebSearch"):
		return t.call("WebSearch", `{"query":"go release"}`)
	case t.offered("ToolSearch") && len(t.results) == 0:
		return t.call("ToolSearch", `{"query":"select:WebSearch","max_results":1}`)
	}
	return modeltest.Reply{Text: "No web search here."}
}

// subagents answers MOCK-K=N: N calls of the subagent tool in one turn,
// then a summary once their results are in.
func subagents(t turn, n string) modeltest.Reply {
	name := "Task"
	if t.offered("Agent") {
		name = "Agent"
	}
	if !t.offered(name) || n == "0" {
		return modeltest.Reply{Text: "Done: answered directly without delegating."}
	}
	if len(t.results) > 0 {
		return modeltest.Reply{Text: "All " + n + " subagents reported back."}
	}
	var calls []modeltest.ToolCall
	for i := 1; i <= int(n[0]-'0'); i++ {
		calls = append(calls, modeltest.ToolCall{ID: fmt.Sprintf("toolu_agent_%d", i), Name: name,
			Input: jsonObj("description", fmt.Sprintf("Mock task %d", i), "prompt", fmt.Sprintf("MOCK-SUBAGENT #%d: look at the README and report what it says.", i), "subagent_type", "general-purpose")})
	}
	return modeltest.Reply{ToolCalls: calls}
}

func has(ok bool) string {
	if ok {
		return "has"
	}
	return "lacks"
}

func jsonObj(kv ...string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}
