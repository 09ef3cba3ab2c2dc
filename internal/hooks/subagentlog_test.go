package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestClaudeCodeBashLogHookLogsSubagents: Claude Code's documented
// PreToolUse logging hook (jq … >> ~/.claude/bash-command-log.txt) logs the
// root's and a subagent's Bash commands and blocks none of them: a
// subagent's PreToolUse hooks run in the root, where the log is writable.
// A PostToolUse hook that fails where the subagent runs it (its sandbox
// keeps it out of your home: Landlock, or first its mount namespace's
// read-only mounts) is said once, in one line, on the root's terminal,
// naming the task, the event and the first line of its stderr.
func TestClaudeCodeBashLogHookLogsSubagents(t *testing.T) {
	p := &project{clitest.NewProject(t)}
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	if err := os.MkdirAll(filepath.Join(p.Home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	post := `printf 'x\n' >> \"$HOME/post-log.txt\" || { echo \"cannot write the post log\" >&2; echo more >&2; exit 1; }`
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"hooks":{
"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"jq -r '.tool_input.command' >> ~/.claude/bash-command-log.txt"}]}],
"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"`+post+`"}]}]}}`)
	spec := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Bash: {command: "echo root-cmd"}
    - tools:
        - Task: {subagent_type: general-purpose, description: "w", prompt: "run", isolation: none}
    - say: "ROOT done"
  general-purpose:
    - tools:
        - Bash: {command: "echo child-one"}
    - tools:
        - Bash: {command: "echo child-two"}
    - say: "## What I did\nRan.\n## What I found\nx\n## Files changed\nnone\n## Problems\nnone"
`)
	gitCommitAll(t, p.Root)
	code, out, errOut := p.Brood("-p", "--model", spec, "--permission-mode", "bypassPermissions", "--", "go")
	if code != 0 || !strings.Contains(out, "ROOT done") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	logged := readFile(t, filepath.Join(p.Home, ".claude", "bash-command-log.txt"))
	for _, c := range []string{"echo root-cmd", "echo child-one", "echo child-two"} {
		if !strings.Contains(logged, c+"\n") {
			t.Errorf("the log hook did not log %q:\n%s", c, logged)
		}
	}
	id := taskOf(t, p, "general-purpose")
	for in, res := range toolResults(t, p.Root, id) {
		if strings.Contains(in, "child-") && !strings.Contains(res, "child-") {
			t.Errorf("the subagent's %s: %q, want it run (the log hook blocks nothing)", in, res)
		}
	}
	if noLandlock(t, p, "general-purpose") {
		t.Logf("no Landlock: the PostToolUse hook could write the home directory:\n%s", errOut)
		return
	}
	var lines []string
	for l := range strings.Lines(errOut) {
		if strings.Contains(l, "failed in the subagent") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], id) || !strings.Contains(lines[0], "PostToolUse") ||
		!(strings.Contains(lines[0], "post-log.txt: Permission denied") || strings.Contains(lines[0], "post-log.txt: Read-only file system")) ||
		strings.Contains(lines[0], "more") {
		t.Errorf("want one line on the terminal for the subagent's failed PostToolUse hook (task %s), got %q:\n%s", id, lines, errOut)
	}
}
