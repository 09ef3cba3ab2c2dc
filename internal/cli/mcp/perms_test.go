package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestChildrenGetProjectRulesAndNoAsks: through `brood mcp` (a real
// process), a child's command the project's settings allow runs, and one
// they don't is denied at once (MCP has no user on the loop to ask), and
// the child's done after that refusal is rejected.
func TestChildrenGetProjectRulesAndNoAsks(t *testing.T) {
	root, env := project(t)
	must(t, os.WriteFile(filepath.Join(root, ".brood", "settings.toml"), []byte("[permissions]\nallow = [\"Bash(touch allowed.txt)\"]\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, ".brood", "script.yaml"), []byte(`agents:
  general-purpose:
    - tools:
        - Bash: {command: "touch allowed.txt"}
        - Bash: {command: "touch denied.txt"}
    - say: "gp allowed=[{{result 0}}] denied=[{{result 1}}]"
`), 0o644))
	cmd := brood(t, root, append(env, "BROOD_TRUST_PROJECT=1"), "mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	must(t, err)
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Task", Arguments: map[string]any{
		"subagent_type": "general-purpose", "description": "touch two files", "prompt": "Touch them.", "isolation": "none",
	}})
	must(t, err)
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "denied=[permission denied") || !strings.Contains(text, "no one is here to give it") {
		t.Errorf("Task = %v\n%s", res.IsError, text)
	}
	// The child said done after a refused call: its parent's unauthorized
	// guardrail (reject by default) rejects it, an error result over MCP.
	if !res.IsError || !strings.Contains(text, `status="rejected"`) || !strings.Contains(text, "rejected by its parent's guardrails (unauthorized)") {
		t.Errorf("a result built on a refused call is not rejected: %v\n%s", res.IsError, text)
	}
	if _, err := os.Stat(filepath.Join(root, "allowed.txt")); err != nil {
		t.Errorf("the command the project allows did not run: %v\n%s", err, text)
	}
	if _, err := os.Stat(filepath.Join(root, "denied.txt")); err == nil {
		t.Errorf("the command no rule allows ran\n%s", text)
	}
}
