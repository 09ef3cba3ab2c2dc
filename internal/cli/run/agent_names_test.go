package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestClaudeAgentNamesInHooks: hook matchers written with Claude Code's
// names select brood's: PreToolUse "Agent" fires for a Task call, and
// SubagentStart "Explore" for brood's explore (and "Plan" does not).
func TestClaudeAgentNamesInHooks(t *testing.T) {
	p := clitest.NewProject(t)
	hook := func(name string) string {
		return `{"type": "command", "command": "echo x >> ` + filepath.Join(p.Root, name) + `"}`
	}
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"hooks": {
  "PreToolUse": [{"matcher": "Agent", "hooks": [`+hook("pre-agent")+`]}],
  "SubagentStart": [{"matcher": "Explore", "hooks": [`+hook("start-explore")+`]},
                    {"matcher": "Plan", "hooks": [`+hook("start-plan")+`]}]
}}`)
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: Explore, description: "look", prompt: "Read the README."}
    - say: "done"
  explore:
    - say: "read it"
`)
	code, out, errOut := p.Brood("-p", "--model", mdl, "Look around.")
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	for name, want := range map[string]bool{"pre-agent": true, "start-explore": true, "start-plan": false} {
		_, err := os.Stat(filepath.Join(p.Root, name))
		if got := err == nil; got != want {
			t.Errorf("hook %s ran: %v, want %v (stderr %s)", name, got, want, errOut)
		}
	}
}

// TestInitAgentsAreClaudeCodes: stream-json's init line names the
// built-in agents brood shares with Claude Code as Claude Code 2.1.332's
// does (print-stream-json.jsonl: "agents":["claude","Explore",
// "general-purpose","Plan","statusline-setup"]), in its order, and the
// name it shows starts the agent.
func TestInitAgentsAreClaudeCodes(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "py-explorer.md"), "---\nname: py-explorer\ndescription: reads python\ntools: Read\n---\nYou read.\n")
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: Plan, description: "plan", prompt: "Plan it."}
    - say: "done"
  plan:
    - say: "planned"
`)
	code, out, errOut := p.Brood("-p", "--output-format", "stream-json", "--verbose", "--model", mdl, "Plan.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := clitest.JSONLines(t, out)
	var agents []string
	for _, a := range lines[0]["agents"].([]any) {
		agents = append(agents, a.(string))
	}
	var shared []string
	for _, a := range agents {
		switch a {
		case "explore", "plan":
			t.Errorf("init agents %v: brood's %q where Claude Code says %q", agents, a, strings.ToUpper(a[:1])+a[1:])
		case "Explore", "general-purpose", "Plan":
			shared = append(shared, a)
		}
	}
	if strings.Join(shared, " ") != "Explore general-purpose Plan" || !strings.Contains(strings.Join(agents, " "), "py-explorer") {
		t.Errorf("init agents %v, want Claude Code's Explore, general-purpose, Plan in its order, and the project's py-explorer", agents)
	}
	if res := lines[len(lines)-1]; res["result"] != "done" || !strings.Contains(out, "planned") {
		t.Errorf("subagent_type Plan did not run plan: %v", res)
	}
}
