package spawn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuardMakesAndWatchesNoGitBrood: brood keeps no record under the
// git dir (taskdir.CheckoutState), so the configuration guard makes no
// .git/brood in the user's repository before its snapshot, and a
// .git/brood made during an in-place writer's run (an older brood's
// record, or the writer's) is neither reported as the writer's change of
// git configuration nor removed: the guard once removed brood's own first
// records made during the run and blamed the writer (review34 P3-1), and
// nothing brood trusts is there to guard.
func TestGuardMakesAndWatchesNoGitBrood(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	gitT(t, root, "", "init", "-q")
	writeTestFile(t, filepath.Join(root, "a.txt"), "a\n")
	gitT(t, root, "", "add", ".")
	gitT(t, root, "", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "i")

	d := &Dispatcher{cfg: Config{ProjectRoot: root}}
	g := d.newConfigGuard("")
	g.watch(t.Context(), false, nil)
	if g.err != nil {
		t.Fatal(g.err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git", "brood")); err == nil {
		t.Error("the guard made .git/brood in the user's repository")
	}
	rec := filepath.Join(root, ".git", "brood", "fleet", "T1", "sent.json")
	if err := os.MkdirAll(filepath.Dir(rec), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, rec, `{"inputs":[]}`)

	g.settleStore(t.Context())
	lines := strings.Join(g.settle(nil), "\n")
	if strings.Contains(lines, "brood") {
		t.Errorf("the guard reports .git/brood as a child's change:\n%s", lines)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Errorf("the guard removed a record made during the run: %v", err)
	}
}
