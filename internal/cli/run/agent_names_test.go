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
