package spawn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
)

// TestForkPrefixIsByteIdentical runs a real parent and a real fork child
// against the loopback Anthropic server and compares the request bytes: the
// fork's first request must repeat the parent's tools, system prompt and
// history byte for byte, with cache_control where the parent had it.
func TestForkPrefixIsByteIdentical(t *testing.T) {
	srv := modeltest.NewAnthropic(t)
	srv.SetResponder(func(r modeltest.Recorded) modeltest.Reply {
		body := string(r.Body)
		switch {
		case strings.Contains(body, "You are a fork of the agent above"):
			return modeltest.Reply{Text: "fork report: the README says demo project"}
		case strings.Contains(body, `"tool_use_id":"toolu_fork1"`):
			return modeltest.Reply{Text: "root done"}
		}
		return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_fork1", Name: "Task", Input: `{"prompt":"Read the README and report.","fork":true,"description":"fork it"}`}}}
	})
	p := newProject(t, "agents:\n  '*': [{say: unused}]\n", nil)
	p.env = append(p.env, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=test-key")
	s := p.settings(nil)
	const system = "You are the root agent. Be brief."
	builtins := tool.NewSet(tool.Builtins()...)
	d, err := spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: s,
		Exe: p.exe(t), Env: p.env, MaxDepth: 1, SourceAgent: "root",
		ParentSystem: system, ParentModel: "anthropic/claude-test", ParentTools: builtins.Names(),
		Permissions: dispatch.Permissions{Mode: "default"},
		Extras:      brood(), // as brood's root has: the fork's tools must read the same
	})
	must(t, err)
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", APIKey: "test-key", BaseURL: srv.URL, HTTPClient: srv.Client(), MaxTokens: s.MaxTokens})
	must(t, err)
	perms, err := tool.NewPermissions("default", spawn.AlwaysAllowed(), nil, nil)
	must(t, err)
	var out *agent.Outcome
	for ev, err := range agent.Run(context.Background(), agent.Config{
		Name: "root", Model: m, System: system, MaxTokens: s.MaxTokens,
		Tools: tool.NewSet(append(tool.Builtins(), d.Tools()...)...),
		Env:   &tool.Env{Dir: p.root, Perms: perms},
	}, nil, "Look at this project.") {
		must(t, err)
		if ev.Outcome != nil {
			out = ev.Outcome
		}
	}
	if out == nil || out.Text != "root done" {
		t.Fatalf("root outcome %+v\n%v", out, out.Messages)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want parent, fork, parent", len(reqs))
	}
	var parent1, fork, parent2 map[string]json.RawMessage
	for _, r := range reqs {
		var m map[string]json.RawMessage
		must(t, json.Unmarshal(r.Body, &m))
		switch body := string(r.Body); {
		case strings.Contains(body, "You are a fork of the agent above"):
			fork = m
		case strings.Contains(body, `"tool_use_id":"toolu_fork1"`):
			parent2 = m
		default:
			parent1 = m
		}
	}
	if fork == nil || parent1 == nil || parent2 == nil {
		t.Fatal("could not tell the requests apart")
	}
	for _, k := range []string{"model", "max_tokens", "system", "tools"} {
		if !bytes.Equal(fork[k], parent1[k]) {
			t.Errorf("%s differs between the parent and its fork:\nparent: %.300s\nfork:   %.300s", k, parent1[k], fork[k])
		}
	}
	if !bytes.Contains(fork["system"], []byte(`"cache_control"`)) {
		t.Errorf("no cache_control on the fork's system prompt")
	}
	var pm, fm []json.RawMessage
	must(t, json.Unmarshal(parent2["messages"], &pm))
	must(t, json.Unmarshal(fork["messages"], &fm))
	if len(fm) != 3 || len(pm) != 3 {
		t.Fatalf("messages: parent %d, fork %d; want 3 each", len(pm), len(fm))
	}
	// The prefix the parent's cache holds: its prompt and its forking turn.
	for i := 0; i < 2; i++ {
		if !bytes.Equal(pm[i], fm[i]) {
			t.Errorf("message %d differs:\nparent: %s\nfork:   %s", i, pm[i], fm[i])
		}
	}
	// The breakpoints in the shared prefix sit where the parent's do (the
	// byte equality above includes them): the previous request's last
	// message is marked in both.
	if !bytes.Contains(fm[0], []byte("cache_control")) || bytes.Contains(fm[1], []byte("cache_control")) {
		t.Errorf("breakpoints in the fork's prefix: %s / %s", fm[0], fm[1])
	}
	if !bytes.Contains(fm[2], []byte(`"tool_use_id":"toolu_fork1"`)) || !bytes.Contains(fm[2], []byte("Read the README and report.")) ||
		!bytes.Contains(fm[2], []byte(`"cache_control"`)) {
		t.Errorf("the brief is not the fork's next turn (as the forking call's result, cache-marked): %s", fm[2])
	}
}

// TestForkCannotFork: a fork's own fork:true Task call is refused.
func TestForkCannotFork(t *testing.T) {
	script := `
agents:
  root:
    - tools:
        - Task: {prompt: "go deeper", fork: true}
    - say: "root: {{result 0}}"
  fork:
    - say: "(turn 1 is the parent's own, replayed)"
    - tools:
        - Task: {prompt: "again", fork: true}
    - say: "fork got: {{result 0}}"
`
	p := newProject(t, script, nil)
	d := p.dispatcher(p.settings(nil), 2, nil)
	out, _ := p.runRoot(context.Background(), d)
	if !strings.Contains(out.Text, "a fork cannot fork") {
		t.Fatalf("nested fork not refused:\n%s", out.Text)
	}
}
