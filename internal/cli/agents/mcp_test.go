package agents

import (
	"strings"
	"testing"
)

func TestShowMCP(t *testing.T) {
	ro := fixture(t, map[string]string{
		"proj/.brood/agents/triage.md": "---\nname: triage\ndescription: Files issues.\ntools: Read, mcp__github__create_issue, mcp__notes__*\n" +
			"mcpServers:\n  - github\n  - notes: {command: notes-server, args: [--stdio]}\n---\n",
	})
	out, _, err := run(t, ro, "show", "triage")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"mcp tools:    mcp__github__create_issue, mcp__notes__*",
		"mcp servers:  github (configured), notes (stdio: notes-server --stdio)",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("show lacks %q:\n%s", s, out)
		}
	}
}
