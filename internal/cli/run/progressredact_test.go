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

// TestProgressLineRedactedBeforeItsCut: a secret that straddles where a
// stderr line is cut short (a tool call's input at 100 characters, a
// failed call's output at 160, the model's words before a tool call at
// 200) shows none of its characters: the line is redacted before the cut
// (red team 21 P2-1: 25 of 32 characters reached stderr).
func TestProgressLineRedactedBeforeItsCut(t *testing.T) {
	const secret = "Zq9XvB7kLmN3pQrS8tUwYz1aBcDeFgH2"
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "MY_SERVICE_TOKEN="+secret+"\n")
	script := filepath.Join(t.TempDir(), "s.yaml")
	clitest.WriteFile(t, script, `
agents:
  root:
    - say: "`+strings.Repeat("w", 185)+` `+secret+`"
      tools:
        - Bash: {command: 'echo `+strings.Repeat("A", 85)+` `+secret+` >/dev/null'}
    - tools:
        - Bash: {command: 'echo `+strings.Repeat("B", 150)+secret+`; exit 3'}
    - say: "done"
`)
	code, out, errOut := p.Brood("run", "--model", "script:"+script, "--allow", "Bash", "go")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, secret[:8]) {
		t.Errorf("stderr carries the start of the secret:\n%s", errOut)
	}
	if n := strings.Count(errOut, "[REDACTED"); n < 3 { // (the marker itself may be cut)
		t.Errorf("stderr shows the marker %d times, want 3 (the words, the call, the failure):\n%s", n, errOut)
	}
}
