package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestAddDirReachesChildren: through the real CLI, the directories
// --add-dir adds reach the subagents: each one's prompt names them, an
// explore subagent reads a file there (brood's read-only sandbox keeps a
// child from writing, not from reading outside the project: a sibling
// directory is readable too, as it is to the root), and an in-place
// writer writes there, as in its tree, but not in a sibling directory the
// run did not add.
func TestAddDirReachesChildren(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	outside := t.TempDir()
	added, sibling := filepath.Join(outside, "added"), filepath.Join(outside, "sibling")
	clitest.WriteFile(t, filepath.Join(added, "notes.txt"), "ADDED-CONTENT\n")
	clitest.WriteFile(t, filepath.Join(sibling, "other.txt"), "SIBLING-CONTENT\n")
	spec := p.Script("a.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "look", prompt: "look"}
        - Task: {subagent_type: general-purpose, description: "write", prompt: "write", isolation: none}
    - say: "ROOT {{result 0}} WRITER {{result 1}}"
  explore:
    - tools:
        - Read: {file_path: `+filepath.Join(added, "notes.txt")+`}
    - say: "## What I found\nA={{result 0}}\nSYS={{.System}}\n"
  general-purpose:
    - tools:
        - Write: {file_path: `+filepath.Join(added, "made.txt")+`, content: "made\n"}
        - Bash: {command: "echo x > `+filepath.Join(sibling, "made.txt")+` || echo SIBLING-REFUSED"}
    - say: "## What I did\nW={{result 0}} B={{result 1}}\n## What I found\nx\n## Files changed\nnone\n## Problems\nnone"
`)
	code, out, errOut := p.Brood("-p", "--model", spec, "--permission-mode", "bypassPermissions", "--add-dir", added, "--", "go")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "ADDED-CONTENT") {
		t.Errorf("the explore subagent could not read the added directory:\n%s", out)
	}
	if !strings.Contains(out, "Additional working directories (--add-dir): "+added) {
		t.Errorf("the subagent's prompt does not name the added directory:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(added, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the in-place writer could not write the added directory (%v):\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(sibling, "made.txt")); err == nil || !strings.Contains(out, "SIBLING-REFUSED") {
		t.Errorf("the in-place writer wrote a directory the run did not add (%v):\n%s", err, out)
	}
}
