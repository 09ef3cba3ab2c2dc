package spawn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuardKeepsRecordsMadeDuringTheRun (review34 P3-1): the guard took a
// .git/brood missing at its snapshot as a place a child may not make, so
// a record the parent (or another brood session) made there while an
// in-place writer ran was removed and reported as the writer's change:
// the user's honest fleet call then showed "unverified".
func TestGuardKeepsRecordsMadeDuringTheRun(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	gitT(t, root, "", "init", "-q")
	writeTestFile(t, filepath.Join(root, "a.txt"), "a\n")
	gitT(t, root, "", "add", ".")
	gitT(t, root, "", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "i")

	d := &Dispatcher{cfg: Config{ProjectRoot: root}}
	g := d.newConfigGuard()
	g.watch(t.Context(), false, nil)
	if g.err != nil {
		t.Fatal(g.err)
	}
	// The parent's own record, made while the writer runs.
	rec := filepath.Join(root, ".git", "brood", "fleet", "T1", "sent.json")
	if err := os.MkdirAll(filepath.Dir(rec), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, rec, `{"sent":[]}`)

	g.settleStore(t.Context())
	lines := strings.Join(g.settle(nil), "\n")
	if strings.Contains(lines, "brood") {
		t.Errorf("the guard reports brood's own record as a child's change:\n%s", lines)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Errorf("the guard removed brood's own record made during the run: %v", err)
	}
}
