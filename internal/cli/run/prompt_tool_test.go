package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/mcpclient/mcptest"
)

// promptScript: the root writes a file and runs a command, both needing
// approval headless, then hands a command to a subagent.
const promptScript = `agents:
  root:
    - tools:
        - Write: {file_path: out.txt, content: "hello"}
        - Bash: {command: "touch forbidden.txt"}
    - tools:
        - Task: {subagent_type: general-purpose, description: "touch", prompt: "Touch two files."}
    - say: "ROOT=[{{trunc 4000 (result 0)}}]"
  general-purpose:
    - tools:
        - Bash: {command: "touch child-ok.txt"}
        - Bash: {command: "touch forbidden-child.txt"}
    - say: "## What I did\nTouched.\n## What I found\nCHILD=[{{trunc 200 (result 0)}}] [{{trunc 200 (result 1)}}]\n## Files changed\nnone\n## Problems\nnone"
`

// TestPermissionPromptTool: --permission-prompt-tool mcp__notes__approve
// decides the calls that need approval headless, as Claude Code's: it is
// called with {tool_name, input, tool_use_id}; its allow runs the call
// with its updatedInput (the file holds what it wrote, naming the call's
// id), its deny refuses the call with its message (listed in
// permission_denials); a subagent's questions go to it too. Without the
// flag both calls are refused; a tool the run lacks exits 1.
func TestPermissionPromptTool(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	clitest.WriteFile(t, filepath.Join(p.Root, "cfg.json"), approveConfig(t))
	mdl := p.Script("s.yaml", promptScript)
	code, out, errOut := p.Brood("-p", "--model", mdl, "--mcp-config", "cfg.json", "--permission-prompt-tool", "mcp__notes__approve", "--output-format", "json", "go")
	if code != 0 || strings.Contains(errOut, "accepted;") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(p.Root, "out.txt"))
	if err != nil || !strings.HasPrefix(string(b), "APPROVED ") || len(strings.TrimSpace(string(b))) <= len("APPROVED ") {
		t.Errorf("out.txt: %q (%v), want the prompt tool's updatedInput, naming the call", b, err)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "forbidden.txt")); err == nil {
		t.Errorf("the denied command ran")
	}
	for _, w := range []string{`"permission_denials":[{"tool_name":"Bash"`, `touch forbidden.txt`, "CHILD=[(no output", `] [permission denied: the user declined Bash \"touch forbidden`} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	// The deny's message is the refused call's result.
	tr, _ := filepath.Glob(filepath.Join(p.Root, ".brood", "sessions", "*.jsonl"))
	if len(tr) != 1 {
		t.Fatalf("transcripts %v", tr)
	}
	b, _ = os.ReadFile(tr[0])
	if !strings.Contains(string(b), "permission denied: Bash: approve says no to Bash") {
		t.Errorf("the transcript lacks the prompt tool's message:\n%s", b)
	}
	// The Write's result record holds the input that ran: updatedInput.
	if !strings.Contains(string(b), `"type":"tool_result"`) || !strings.Contains(string(b), `"content":"APPROVED toolu_`) {
		t.Errorf("the transcript does not record the updatedInput that ran:\n%s", b)
	}
	// Without it both are refused.
	os.Remove(filepath.Join(p.Root, "out.txt"))
	code, _, errOut = p.Brood("-p", "--model", mdl, "--mcp-config", "cfg.json", "--output-format", "json", "go")
	if _, err := os.Stat(filepath.Join(p.Root, "out.txt")); code != 0 || err == nil {
		t.Errorf("without the flag: exit %d, out.txt written (%v); stderr %s", code, err, errOut)
	}
	code, _, errOut = p.Brood("-p", "--model", mdl, "--mcp-config", "cfg.json", "--permission-prompt-tool", "mcp__notes__nope", "go")
	if code != 1 || !strings.Contains(errOut, "--permission-prompt-tool mcp__notes__nope: no such MCP tool; the run's MCP tools are mcp__notes__approve, ") {
		t.Errorf("an unknown tool: exit %d, stderr %s", code, errOut)
	}
}

// approveConfig is --mcp-config's JSON naming the notes server with its
// approve tool.
func approveConfig(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: "1", mcptest.EnvApprove: "1"}},
	}})
	return string(b)
}

// TestPermissionPromptToolWithTools: --tools limits the built-in tools
// only, as Claude Code's: the prompt tool is found among the connected MCP
// servers all the same, and decides. --permission-prompt-tool stdio (the
// Agent SDK's control protocol, which brood lacks) is accepted with one
// note, and the calls needing approval are refused as without the flag.
func TestPermissionPromptToolWithTools(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	clitest.WriteFile(t, filepath.Join(p.Root, "cfg.json"), approveConfig(t))
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Write: {file_path: out.txt, content: "hello"}
    - say: "ROOT=[{{trunc 4000 (result 0)}}]"
`)
	code, out, errOut := p.Brood("-p", "--model", mdl, "--mcp-config", "cfg.json", "--tools", "Write,Bash", "--permission-prompt-tool", "mcp__notes__approve", "go")
	if code != 0 {
		t.Fatalf("with --tools: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(p.Root, "out.txt")); err != nil || !strings.HasPrefix(string(b), "APPROVED ") {
		t.Errorf("with --tools: out.txt %q (%v), want the prompt tool's answer\n%s", b, err, errOut)
	}
	os.Remove(filepath.Join(p.Root, "out.txt"))
	code, out, errOut = p.Brood("-p", "--model", mdl, "--permission-prompt-tool", "stdio", "go")
	if code != 0 || strings.Count(errOut, "--permission-prompt-tool stdio: accepted;") != 1 || !strings.Contains(errOut, "not supported") {
		t.Fatalf("stdio: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "out.txt")); err == nil {
		t.Errorf("stdio: the Write needing approval ran")
	}
}
