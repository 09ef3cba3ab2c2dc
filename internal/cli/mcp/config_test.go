package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/mcpclient/mcptest"
)

// TestProjectMCPJSONNeedsTrust runs `brood subagent` as a real process in a
// project whose .mcp.json configures the notes server, with an agent that
// names it: the child calls its tool once the project is trusted, and the
// server is left out, with a one-line notice, until then.
func TestProjectMCPJSONNeedsTrust(t *testing.T) {
	root, env := project(t)
	exe, err := os.Executable()
	must(t, err)
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: "1"}},
	}})
	must(t, err)
	must(t, os.WriteFile(filepath.Join(root, ".mcp.json"), cfg, 0o644))
	must(t, os.MkdirAll(filepath.Join(root, ".brood", "agents"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, ".brood", "agents", "noter.md"), []byte(
		"---\nname: noter\ndescription: uses the notes server\ntools: Read, mcp__notes__echo\nmcpServers: [notes]\n---\nYou take notes.\n"), 0o644))
	sp := filepath.Join(root, ".brood", "script.yaml")
	must(t, os.WriteFile(sp, []byte("agents:\n  noter:\n    - tools:\n        - mcp__notes__echo: {text: hello}\n    - say: \"noter saw [{{result 0}}]\"\n"), 0o644))

	out, err := brood(t, root, env, "subagent", "noter", "echo hello").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `noter saw [unknown tool "mcp__notes__echo"`) ||
		!strings.Contains(string(out), "brood: .mcp.json allows more than the defaults (MCP servers notes (.mcp.json)); not applied") {
		t.Errorf("untrusted: %v\n%s", err, out)
	}
	out, err = brood(t, root, append(env, "BROOD_TRUST_PROJECT=1"), "subagent", "noter", "echo hello").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "noter saw [echo: hello]") {
		t.Errorf("trusted for one run: %v\n%s", err, out)
	}
	// brood trust grants it for good, as the file is now.
	if out, err := brood(t, root, env, "trust").CombinedOutput(); err != nil || !strings.Contains(string(out), "MCP servers notes") {
		t.Fatalf("brood trust: %v\n%s", err, out)
	}
	out, err = brood(t, root, env, "subagent", "noter", "echo hello").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "noter saw [echo: hello]") || strings.Contains(string(out), "not applied") {
		t.Errorf("trusted with brood trust: %v\n%s", err, out)
	}
}

// TestRootGetsConfiguredServers: `brood run`'s own agent has the tools of
// the servers in ~/.claude.json (the user's, always trusted).
func TestRootGetsConfiguredServers(t *testing.T) {
	root, env := project(t)
	exe, err := os.Executable()
	must(t, err)
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: "1"}},
	}})
	must(t, err)
	must(t, os.WriteFile(filepath.Join(home, ".claude.json"), cfg, 0o644))
	sp := filepath.Join(root, ".brood", "script.yaml")
	must(t, os.WriteFile(sp, []byte("agents:\n  root:\n    - tools:\n        - mcp__notes__echo: {text: from the root}\n    - say: \"root saw [{{result 0}}]\"\n"), 0o644))
	out, err := brood(t, root, env, "run", "use the notes").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "root saw [echo: from the root]") {
		t.Errorf("brood run: %v\n%s", err, out)
	}
}
