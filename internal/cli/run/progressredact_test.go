package run_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestProgressLineRedacted: the text mode's stderr progress line shows a
// tool call's input (`▸ Bash echo …`, `▸ Task …` with its prompt): a .env
// value the model typed in a command or a brief is redacted there as on
// stdout, the root's lines and its children's alike (it was in clear on
// stderr, and so in CI logs).
func TestProgressLineRedacted(t *testing.T) {
	const secret = "hunter2hunter2"
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "API_SECRET="+secret+"\n")
	script := filepath.Join(t.TempDir(), "s.yaml")
	clitest.WriteFile(t, script, `
agents:
  root:
    - tools:
        - Bash: {command: 'echo `+secret+`; false `+secret+`'}
    - tools:
        - Task: {subagent_type: general-purpose, description: "check `+secret+`", prompt: 'Check `+secret+`'}
    - say: "done"
  general-purpose:
    - tools:
        - Bash: {command: 'echo `+secret+`'}
    - say: |
        ## What I did
        checked `+secret+`
        ## Files changed
        none
`)
	code, out, errOut := p.Brood("run", "--model", "script:"+script, "--allow", "Bash", "--allow", "Task", "go")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, secret) {
		t.Errorf("stderr carries the .env value:\n%s", errOut)
	}
	if !strings.Contains(errOut, "▸ Bash") || !strings.Contains(errOut, "[REDACTED:.env:API_SECRET]") {
		t.Errorf("stderr lacks the redacted progress line:\n%s", errOut)
	}
}
