package mcpclient_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestUntrustedServerIsHeldNotUnknown: through the real CLI, a subagent
// that names (mcpServers: [notes]) a server configured in an untrusted
// project's .mcp.json is told it is configured and held back until the
// project is trusted, and how to trust it, not that no such server is
// configured; a name configured nowhere still says that.
func TestUntrustedServerIsHeldNotUnknown(t *testing.T) {
	p := testbrood.NewProject(t, "BROOD_TEST_MAIN", nil)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".mcp.json"), `{"mcpServers":{"notes":{"command":"/bin/false"}}}`)
	for name, server := range map[string]string{"noter": "notes", "ghost": "nowhere"} {
		testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", name+".md"),
			"---\nname: "+name+"\ndescription: notes\nmcpServers: ["+server+"]\n---\nYou note.\n")
	}
	spec := p.Script("held.yaml", `
agents:
  root:
    - tools:
        - Task: {subagent_type: noter, description: "note", prompt: "note"}
        - Task: {subagent_type: ghost, description: "ghost", prompt: "ghost"}
    - say: "root done"
  noter:
    - say: "noted"
  ghost:
    - say: "haunted"
`)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, nil, "run", "--model", spec, "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	tasks, err := dispatch.ListTasks(p.Root)
	if err != nil {
		t.Fatal(err)
	}
	notes := map[string]string{}
	for _, task := range tasks {
		notes[task.Envelope.TargetAgent] = strings.Join(task.Envelope.Notes, "\n")
	}
	if n := notes["noter"]; !strings.Contains(n, "notes is configured in "+filepath.Join(p.Root, ".mcp.json")) ||
		!strings.Contains(n, "held back until you trust this project (brood trust") || strings.Contains(n, "not a configured") {
		t.Errorf("the noter's notes do not say its server is held back for want of trust:\n%s", n)
	}
	if n := notes["ghost"]; !strings.Contains(n, "nowhere is not a configured MCP server") {
		t.Errorf("the ghost's notes:\n%s", n)
	}
}
