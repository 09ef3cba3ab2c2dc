package script_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/script"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{"unknown step key", "agents:\n  root:\n    - say: hi\n      tool: [{LS: {}}]\n", []string{"t.yaml", "tool", "unknown"}},
		{"unknown top-level key", "agent:\n  root:\n    - say: hi\n", []string{"t.yaml", "agent"}},
		{"bad delay", "agents:\n  root:\n    - say: hi\n      delay: soon\n", []string{"t.yaml", "agents.root[0]", `delay "soon"`, "300ms"}},
		{"tools entry with two keys", "agents:\n  root:\n    - say: hi\n    - tools:\n        - {LS: {}, Glob: {}}\n", []string{"agents.root[1]", "tools[0]", "got 2 keys"}},
		{"tools entry with no key", "agents:\n  root:\n    - tools:\n        - {}\n", []string{"tools[0]", "got 0 keys"}},
		{"case without if", "agents:\n  explore:\n    - say: x\n      cases:\n        - say: y\n", []string{"agents.explore[0]", "cases[0]", "`if:`"}},
		{"bad delay inside a case", "agents:\n  r:\n    - cases:\n        - if: a\n          delay: 5 parsecs\n", []string{"cases[0]", "delay"}},
		{"no agents", "# nothing\n", []string{"t.yaml", "no agents"}},
		{"not yaml", "agents: [\n", []string{"t.yaml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := script.Parse("t.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func parse(t *testing.T, yaml string) *script.Model {
	t.Helper()
	f, err := script.Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return script.New("script:t.yaml", f)
}

func ask(t *testing.T, m *script.Model, req *model.Request) *model.Response {
	t.Helper()
	var streamed strings.Builder
	resp, err := model.Collect(context.Background(), m, req, func(s string) { streamed.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if streamed.String() != resp.Message.Text() {
		t.Errorf("streamed %q, final text %q", streamed.String(), resp.Message.Text())
	}
	return resp
}

func user(s string) model.Message { return model.UserText(s) }
func assistant(s string) model.Message {
	return model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: s}}}
}
func results(texts ...string) model.Message {
	m := model.Message{Role: model.RoleUser}
	for i, s := range texts {
		m.Content = append(m.Content, model.Part{Type: model.PartToolResult, ToolUseID: fmt.Sprint("t", i), Text: s})
	}
	return m
}

func TestSelection(t *testing.T) {
	m := parse(t, `
agents:
  root:
    - say: root one
    - say: root two
  explore:
    - say: explore one
    - cases:
        - if: "needle"
          say: explore found it
        - if: "hay"
          say: explore saw hay
      say: explore two
  "*":
    - say: anyone one
`)
	tests := []struct {
		agent string
		msgs  []model.Message
		want  string
	}{
		{"root", []model.Message{user("hi")}, "root one"},
		{"root", []model.Message{user("hi"), assistant("a"), user("more")}, "root two"},
		{"root", []model.Message{user("hi"), assistant("a"), user("b"), assistant("c"), user("d")}, "(script script:t.yaml has no turn 3 for agent root; stopping here.)"},
		{"explore", []model.Message{user("needle")}, "explore one"},
		{"explore", []model.Message{user("needle"), assistant("a"), user("plain")}, "explore two"},
		{"explore", []model.Message{user("x"), assistant("a"), results("a needle in it")}, "explore found it"},
		{"explore", []model.Message{user("x"), assistant("a"), results("hay and a needle")}, "explore found it"},
		{"explore", []model.Message{user("x"), assistant("a"), results("only hay")}, "explore saw hay"},
		// Only the latest user turn counts, not the first prompt.
		{"explore", []model.Message{user("needle"), assistant("a"), user("nothing")}, "explore two"},
		{"plan", []model.Message{user("hi")}, "anyone one"},
		{"", []model.Message{user("hi")}, "anyone one"},
	}
	for _, tc := range tests {
		resp := ask(t, m, &model.Request{Agent: tc.agent, Messages: tc.msgs})
		if got := resp.Message.Text(); got != tc.want {
			t.Errorf("agent %q after %d messages: %q, want %q", tc.agent, len(tc.msgs), got, tc.want)
		}
		if resp.StopReason != "end_turn" || resp.Message.Role != model.RoleAssistant {
			t.Errorf("stop %q role %q", resp.StopReason, resp.Message.Role)
		}
	}

	noStar := parse(t, "agents:\n  root:\n    - say: hi\n")
	_, err := model.Collect(context.Background(), noStar, &model.Request{Agent: "plan", Messages: []model.Message{user("x")}}, nil)
	if err == nil || !strings.Contains(err.Error(), `"plan"`) {
		t.Errorf("unknown agent without \"*\": %v", err)
	}
}

func TestTemplates(t *testing.T) {
	m := parse(t, `
agents:
  "*":
    - say: first turn
    - say: |-
        agent={{.Agent}} turn={{.Turn}} prompt={{.Prompt}} system={{.System}} tools={{join .Tools ","}} n={{len .Results}}
        r0={{result 0}}|r9={{result 9}}
        lines={{lines 2 3 (result 1)}}
        first={{first (result 1)}} count={{count (result 1)}}
        grep={{grep "^b" (result 1)}}
        trunc={{trunc 4 (result 0)}} short={{trunc 40 (result 0)}}
        last={{trim .Last}}
      tools:
        - Read: {file_path: "{{first (result 1)}}", limit: 3, nested: ["{{result 0}}", {deep: "{{count (result 1)}}"}], flag: true}
`)
	req := &model.Request{
		Agent: "explore", System: "sys", Tools: []model.ToolSpec{{Name: "Read"}, {Name: "Grep"}},
		Messages: []model.Message{user("the prompt"), assistant("calling"), results("0123456789", "\n  alpha\nbeta\n\nbravo\n")},
	}
	resp := ask(t, m, req)
	want := `agent=explore turn=2 prompt=the prompt system=sys tools=Read,Grep n=2
r0=0123456789|r9=
lines=  alpha
beta
first=alpha count=3
grep=beta
bravo
trunc=0123… short=0123456789
last=0123456789

  alpha
beta

bravo`
	if got := resp.Message.Text(); got != want {
		t.Errorf("say:\n%s\nwant:\n%s", got, want)
	}
	uses := resp.Message.ToolUses()
	if len(uses) != 1 || uses[0].Name != "Read" || uses[0].ID == "" || resp.StopReason != "tool_use" {
		t.Fatalf("tool uses %+v stop %q", uses, resp.StopReason)
	}
	var in map[string]any
	if err := json.Unmarshal(uses[0].Input, &in); err != nil {
		t.Fatal(err)
	}
	wantIn := `map[file_path:alpha flag:true limit:3 nested:[0123456789 map[deep:3]]]`
	if fmt.Sprint(in) != wantIn {
		t.Errorf("tool input %v, want %s", in, wantIn)
	}
}

func TestTemplateEdgeCases(t *testing.T) {
	tests := []struct {
		say, result, want string
	}{
		{`{{lines 0 99 (result 0)}}`, "a\nb\n", "a\nb"},
		{`{{lines 3 2 (result 0)}}`, "a\nb\nc", ""},
		{`{{first (result 0)}}`, "\n \n", ""},
		{`{{count (result 0)}}`, "", "0"},
		{`{{trunc 2 (result 0)}}`, "héllo", "h…"}, // never cuts a character in half
		{`{{trunc 5 (result 0)}}`, "héllo", "héll…"},
		{`plain text`, "", "plain text"},
	}
	for _, tc := range tests {
		m := parse(t, fmt.Sprintf("agents:\n  r:\n    - say: %q\n", tc.say))
		resp := ask(t, m, &model.Request{Agent: "r", Messages: []model.Message{results(tc.result)}})
		if got := resp.Message.Text(); got != tc.want {
			t.Errorf("%s on %q = %q, want %q", tc.say, tc.result, got, tc.want)
		}
	}
	for _, bad := range []string{`{{nosuchfunc 1}}`, `{{grep "(" (result 0)}}`, `{{.Nope}}`} {
		m := parse(t, fmt.Sprintf("agents:\n  r:\n    - say: %q\n", bad))
		_, err := model.Collect(context.Background(), m, &model.Request{Agent: "r", Messages: []model.Message{user("x")}}, nil)
		if err == nil || !strings.Contains(err.Error(), "agent r, turn 1: say") {
			t.Errorf("%s: error %v", bad, err)
		}
	}
}

func TestDemoScriptParses(t *testing.T) {
	m, err := script.Load("demo")
	if err != nil {
		t.Fatal(err)
	}
	f, err := script.Parse("demo", script.DemoScript())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"root", "explore", "plan", "*"} {
		if len(f.Agents[a]) == 0 {
			t.Errorf("demo has no turns for %s", a)
		}
	}
	resp := ask(t, m, &model.Request{Agent: "root", Messages: []model.Message{user("tour")}})
	if len(resp.Message.ToolUses()) == 0 {
		t.Error("the demo's first turn calls no tool")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/s.yaml"
	if _, err := script.Load(path); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	writeFile(t, path, "agents:\n  root:\n    - say: loaded\n")
	m, err := script.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "script:"+path {
		t.Errorf("name %q", m.Name())
	}
	writeFile(t, path, "agents:\n  root:\n    - bogus: 1\n")
	if _, err := script.Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("bad file: %v", err)
	}
}

func TestUsageAndRequests(t *testing.T) {
	m := parse(t, "agents:\n  r:\n    - say: a fairly long answer with several words in it\n      tools: [{LS: {path: .}}]\n")
	req := &model.Request{Agent: "r", System: strings.Repeat("s", 400), Messages: []model.Message{user("hello there")}}
	resp := ask(t, m, req)
	if resp.Usage.Input < 100 || resp.Usage.Output < 10 {
		t.Errorf("usage %+v does not reflect the sizes", resp.Usage)
	}
	ask(t, m, &model.Request{Agent: "r", Messages: []model.Message{user("second")}})
	reqs := m.Requests()
	if len(reqs) != 2 || reqs[0].System != req.System || reqs[1].Messages[0].Text() != "second" {
		t.Fatalf("recorded requests %+v", reqs)
	}
	// Tool ids differ from one call to the next.
	r1 := ask(t, m, &model.Request{Agent: "r", Messages: []model.Message{user("x")}})
	r2 := ask(t, m, &model.Request{Agent: "r", Messages: []model.Message{user("x")}})
	if r1.Message.ToolUses()[0].ID == r2.Message.ToolUses()[0].ID {
		t.Error("two calls produced the same tool_use id")
	}
}

func TestDelayHonoursCancellation(t *testing.T) {
	m := parse(t, "agents:\n  r:\n    - say: late\n      delay: 1h\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := model.Collect(ctx, m, &model.Request{Agent: "r", Messages: []model.Message{user("x")}}, nil)
	if err != context.Canceled {
		t.Errorf("err %v, want context.Canceled", err)
	}
}
