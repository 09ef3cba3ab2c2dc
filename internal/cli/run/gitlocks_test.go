package run_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestWriterLeftGitLocksReported: an in-place writer that leaves git's
// lock files behind (the user's next commit then fails) is reported:
// its result's note names them (red team 21 P3-4: nothing said so).
func TestWriterLeftGitLocksReported(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = p.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	script := filepath.Join(t.TempDir(), "s.yaml")
	clitest.WriteFile(t, script, `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "lock", prompt: "lock"}
    - say: "{{result 0}}"
  general-purpose:
    - tools:
        - Bash: {command: 'touch .git/index.lock .git/HEAD.lock'}
    - say: |
        ## What I did
        nothing
        ## Files changed
        none
`)
	code, out, errOut := p.Brood("run", "--model", "script:"+script, "--allow", "Bash", "--allow", "Task", "go")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if m, _ := filepath.Glob(filepath.Join(p.Root, ".git", "*.lock")); len(m) != 2 {
		t.Fatalf("locks %v", m)
	}
	if !strings.Contains(out, "left git lock files") || !strings.Contains(out, ".git/HEAD.lock, .git/index.lock") {
		t.Errorf("the result does not name the lock files left:\n%s\n%s", out, errOut)
	}
}
