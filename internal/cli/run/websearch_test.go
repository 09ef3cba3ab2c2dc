package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

func searchingReply() modeltest.Reply {
	return modeltest.Reply{Text: "Searching. ", Usage: model.Usage{Input: 200, Output: 30, WebSearches: 1},
		Search: &modeltest.Search{ID: "srvtoolu_cli", Query: "brood release",
			Results: []modeltest.SearchResult{{Title: "brood", URL: "https://example.org/brood"}}, Cited: "brood is released."}}
}

// TestWebSearchCLI: brood -p on an Anthropic model (a loopback Messages
// API) with --allowedTools WebSearch sends the provider's web_search tool;
// the search's blocks are stream-json assistant lines, the result counts
// the search in usage.server_tool_use.web_search_requests and modelUsage,
// and nothing is run locally. Without a rule the tool is not sent and
// nothing is said (the rules left it out); on an OpenAI-compatible model
// under --dangerously-skip-permissions brood says once on stderr that the
// provider has no search and the run goes on.
func TestWebSearchCLI(t *testing.T) {
	p := clitest.NewProject(t)
	fake := modeltest.NewAnthropic(t)
	fake.SetResponder(func(modeltest.Recorded) modeltest.Reply { return searchingReply() })
	p.Env["ANTHROPIC_BASE_URL"], p.Env["ANTHROPIC_API_KEY"] = fake.URL, "sk-ant-test-not-a-key"
	code, out, errOut := p.Brood("-p", "--model", "anthropic/claude-sonnet-4-5", "--output-format", "stream-json", "--verbose",
		"--allowedTools", "WebSearch(domain:example.org)", "--", "is brood released?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var result map[string]any
	var blocks []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Type    string `json:"type"`
			Message struct {
				Content []struct {
					Type string `json:"type"`
				} `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		for _, c := range v.Message.Content {
			blocks = append(blocks, v.Type+":"+c.Type)
		}
		if v.Type == "result" {
			_ = json.Unmarshal([]byte(line), &result)
		}
	}
	if got := strings.Join(blocks, " "); got != "assistant:text assistant:server_tool_use assistant:web_search_tool_result assistant:text" {
		t.Errorf("stream-json blocks: %s\n%s", got, out)
	}
	if result == nil || result["result"] != "Searching. brood is released." {
		t.Fatalf("result: %v", result)
	}
	usage := result["usage"].(map[string]any)["server_tool_use"].(map[string]any)
	mu := result["modelUsage"].(map[string]any)["claude-sonnet-4-5"].(map[string]any)
	if usage["web_search_requests"] != float64(1) || mu["webSearchRequests"] != float64(1) {
		t.Errorf("searches counted: usage %v, modelUsage %v", usage, mu)
	}
	if c := result["total_cost_usd"].(float64); c < 0.01 {
		t.Errorf("total_cost_usd %v leaves out the search ($10 per 1,000)", c)
	}
	body := string(fake.Requests()[0].Body)
	if !strings.Contains(body, `"allowed_domains":["example.org"],"name":"web_search","type":"web_search_20250305"`) {
		t.Errorf("request tools: %s", body)
	}

	// No rule: not offered, and not said (the rules left it out).
	n := len(fake.Requests())
	code, _, errOut = p.Brood("-p", "--model", "anthropic/claude-sonnet-4-5", "--", "again")
	if code != 0 || strings.Contains(errOut, "WebSearch: ") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if body := string(fake.Requests()[n].Body); strings.Contains(body, "web_search") {
		t.Errorf("web_search offered without a rule: %s", body)
	}

	// An OpenAI-compatible model: one line on stderr, the run goes on.
	oa := modeltest.NewOpenAI(t)
	oa.SetResponder(func(modeltest.Recorded) modeltest.Reply { return modeltest.Reply{Text: "No search here."} })
	p.Env["OPENAI_BASE_URL"], p.Env["OPENAI_API_KEY"] = oa.URL, "sk-test"
	code, out, errOut = p.Brood("-p", "--model", "openai/gpt-4.1", "--dangerously-skip-permissions", "--", "search")
	if code != 0 || !strings.Contains(out, "No search here.") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if strings.Count(errOut, "WebSearch: this model's provider offers no server-side search; the agent runs without it") != 1 {
		t.Errorf("stderr: %s", errOut)
	}
	var req struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(oa.Requests()[0].Body, &req); err != nil {
		t.Fatal(err)
	}
	for _, tl := range req.Tools {
		if tl.Function.Name == "WebSearch" {
			t.Error("WebSearch offered to the OpenAI model as a function")
		}
	}
}

// TestWebSearchChild: a subagent (a real child process) on a model that
// runs web search gets WebSearch under the project's rule: its answer
// cites the search, and its transcript keeps the provider's blocks; one
// whose definition says `network: none` is not offered the search, and its
// transcript says why.
func TestWebSearchChild(t *testing.T) {
	p := clitest.NewDispatchProject(t, false)
	for name, net := range map[string]string{"researcher": "on", "offline": "none"} {
		clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", name+".md"),
			"---\nname: "+name+"\ndescription: searches\ntools: Read, WebSearch\nnetwork: "+net+"\n---\nYou search.\n")
	}
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[permissions]\nallow = [\"WebSearch\"]\n")
	step := "    - say: \"Looking. \"\n      search: {query: go release, results: [{title: Go, url: \"https://go.dev\"}], cited: Go is out.}\n"
	mdl := p.Script("c.yaml", "server_tools: [web_search]\nagents:\n  researcher:\n"+step+"  offline:\n"+step)
	for _, tc := range []struct {
		agent, out, transcript string
	}{
		{"researcher", "Looking. Go is out.", `"type":"web_search_tool_result"`},
		{"offline", "Looking. (no web search was offered)", `"text":"WebSearch: not offered: this agent runs with network: none"`},
	} {
		code, out, errOut := p.Brood("subagent", "--model", mdl, tc.agent, "is go out?")
		if code != 0 || !strings.Contains(out, tc.out) {
			t.Fatalf("%s: exit %d:\n%s\n%s", tc.agent, code, out, errOut)
		}
		m := regexp.MustCompile(`task-id="([0-9A-Z]+)"`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no task id in %s", out)
		}
		b, err := os.ReadFile(filepath.Join(p.Root, ".brood", "dispatch", m[1], "session.jsonl"))
		if err != nil || !strings.Contains(string(b), tc.transcript) {
			t.Errorf("%s: transcript lacks %s (%v):\n%s", tc.agent, tc.transcript, err, b)
		}
	}
}

// TestInitListsOfferedTools: stream-json's init line lists WebSearch only
// when the model is offered it: the provider runs search (a script's
// server_tools, not an OpenAI-compatible server) and a rule allows it.
func TestInitListsOfferedTools(t *testing.T) {
	p := clitest.NewProject(t)
	oa := modeltest.NewOpenAI(t)
	oa.SetResponder(func(modeltest.Recorded) modeltest.Reply { return modeltest.Reply{Text: "ok"} })
	p.Env["OPENAI_BASE_URL"], p.Env["OPENAI_API_KEY"] = oa.URL, "sk-test"
	searching := p.Script("search.yaml", "server_tools: [web_search]\nagents:\n  root:\n    - say: ok\n")
	plain := p.Script("plain.yaml", "agents:\n  root:\n    - say: ok\n")
	for _, tc := range []struct {
		name    string
		args    []string
		offered bool
	}{
		{"provider searches, allowed", []string{"--model", searching, "--allowedTools", "WebSearch"}, true},
		{"provider searches, bypass", []string{"--model", searching, "--dangerously-skip-permissions"}, true},
		{"provider searches, no rule", []string{"--model", searching}, false},
		{"script without search", []string{"--model", plain, "--allowedTools", "WebSearch"}, false},
		{"OpenAI-compatible", []string{"--model", "openai/gpt-4.1", "--dangerously-skip-permissions"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-p", "--output-format", "stream-json", "--verbose"}, tc.args...)
			code, out, errOut := p.Brood(append(args, "--", "search")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var init struct {
				Subtype string   `json:"subtype"`
				Tools   []string `json:"tools"`
			}
			first, _, _ := strings.Cut(out, "\n")
			if err := json.Unmarshal([]byte(first), &init); err != nil || init.Subtype != "init" {
				t.Fatalf("first line is no init line (%v): %s", err, first)
			}
			if !slices.Contains(init.Tools, "Read") {
				t.Errorf("init tools lack Read: %v", init.Tools)
			}
			if got := slices.Contains(init.Tools, "WebSearch"); got != tc.offered {
				t.Errorf("init lists WebSearch: %v, want %v (%v)", got, tc.offered, init.Tools)
			}
		})
	}
}
