package run_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestShippedGitignoreKeepsRecordsOut: a repository that commits a
// .brood/.gitignore ignoring nothing would have `git add -A` publish the
// person's transcripts (redteam P2-8); brood adds its record patterns to
// the repository's own .git/info/exclude and says so once, and git then
// sees none of them.
func TestShippedGitignoreKeepsRecordsOut(t *testing.T) {
	p := clitest.NewProject(t)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = p.Root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", ".gitignore"), "# nothing to ignore\n")
	script := p.Script("s.yaml", "agents:\n  root:\n    - say: \"hello\"\n")
	code, out, errOut := p.Brood("run", "--model", script, "hi")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "does not keep brood's run records out of git; added") {
		t.Errorf("no notice of the exclude added:\n%s", errOut)
	}
	if st := git("status", "--porcelain", "--untracked-files=all", ".brood"); strings.Contains(st, "sessions/") {
		t.Errorf("git sees the transcripts:\n%s", st)
	}
	if b, err := os.ReadFile(filepath.Join(p.Root, ".git", "info", "exclude")); err != nil || !strings.Contains(string(b), "/.brood/sessions/") {
		t.Errorf(".git/info/exclude: %v\n%s", err, b)
	}
	// Said once: the next run finds them ignored.
	if _, _, errOut := p.Brood("run", "--model", script, "hi"); strings.Contains(errOut, "added") {
		t.Errorf("said again:\n%s", errOut)
	}
}
