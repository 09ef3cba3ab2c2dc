package attack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
)

// TestMCPServerNetworkPerAgent (issue 23, remainder 2): a stdio MCP server
// that brood starts for a child runs under the child's network policy, as
// its Bash commands do: for a `network: none` agent its dial tool cannot
// reach a loopback TCP server the test runs, nor can it open a unix
// socket's connection; for a `network: on` agent it reaches the server
// (the control: the tool works).
func TestMCPServerNetworkPerAgent(t *testing.T) {
	if _, ok := sandbox.NetworkBan(); !ok {
		t.Fatal("this machine cannot take the network from a tool process: the attack suite expects Linux with seccomp or Landlock ABI 4")
	}
	ln := sandboxtest.Greet(t, "tcp", "127.0.0.1:0", "")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := newProject(t, map[string]string{"README.md": "# x\n"})
	for _, net := range []string{"none", "on"} {
		writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "net"+net+".md"),
			"---\nname: net"+net+"\ndescription: dials\ntools: mcp__nd__dial\nnetwork: "+net+
				"\nmcpServers:\n  - nd:\n      command: "+exe+"\n      env: {"+mcptest.EnvServer+": \"1\", "+mcptest.EnvDial+": \"1\"}\n---\nYou dial.\n")
	}
	addr := ln.Addr().String()
	mdl := p.script("dial.yaml", fmt.Sprintf(`agents:
  root:
    - tools:
        - Task: {subagent_type: netnone, description: none, prompt: "dial"}
        - Task: {subagent_type: neton, description: on, prompt: "dial"}
    - say: "root done"
  "*":
    - tools:
        - mcp__nd__dial: {text: %q}
    - say: "DIALED {{result 0}}"
`, addr))
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	got := map[string]string{}
	for _, tk := range tasks0(p) {
		if tk.Result != nil {
			got[tk.Agent] = tk.Result.Summary
		}
	}
	if !strings.Contains(got["neton"], "dial: connected") {
		t.Fatalf("the network: on agent's MCP server did not reach the server (the control): %q\n%s", got["neton"], errs)
	}
	if s := got["netnone"]; !strings.Contains(s, "DIALED dial: ") || strings.Contains(s, "dial: connected") {
		t.Errorf("the network: none agent's MCP server reached the network, or never tried: %q", s)
	}
}
