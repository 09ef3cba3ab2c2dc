package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLandDirTakesOnlyTheCheckoutsOwnRecords (review38): the records a
// landing reads and writes are those of the checkout's own git dir; a
// .git file (gitdir:) or link pointing into another checkout, or a
// commondir file planted in its git dir, is refused in one line naming
// the checkout, never another checkout's records taken. A linked work
// tree (git worktree add) and a submodule are their repositories' own.
func TestLandDirTakesOnlyTheCheckoutsOwnRecords(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := func(name string) string {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, "init", "-q")
		os.WriteFile(filepath.Join(dir, "f"), []byte(name+"\n"), 0o644)
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-qm", "i")
		return dir
	}
	b := repo("b")
	bDir, err := landDir(t.Context(), b, callRun)
	if err != nil {
		t.Fatalf("the other checkout's own records: %v", err)
	}
	gitIn(t, b, "worktree", "add", "-q", filepath.Join(base, "wt"))
	sup := repo("sup")
	gitIn(t, sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", repo("subsrc"), "sub")
	for _, tc := range []struct {
		name string
		make func(a string)
		dir  string // the tree brood runs in ("": a)
		same bool   // b's records (a linked work tree's)
		ok   bool
	}{
		{"its own", func(a string) {}, "", false, true},
		{"a linked work tree", nil, filepath.Join(base, "wt"), true, true},
		{"a submodule", nil, filepath.Join(sup, "sub"), false, true},
		{"a .git file into another checkout", func(a string) {
			os.RemoveAll(filepath.Join(a, ".git"))
			os.WriteFile(filepath.Join(a, ".git"), []byte("gitdir: "+filepath.Join(b, ".git")+"\n"), 0o644)
		}, "", false, false},
		{"a link to another checkout's .git", func(a string) {
			os.RemoveAll(filepath.Join(a, ".git"))
			os.Symlink(filepath.Join(b, ".git"), filepath.Join(a, ".git"))
		}, "", false, false},
		{"a commondir file", func(a string) {
			os.WriteFile(filepath.Join(a, ".git", "commondir"), []byte(filepath.Join(b, ".git")+"\n"), 0o644)
		}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = repo(strings.ReplaceAll(tc.name, " ", "-"))
				tc.make(dir)
			}
			got, err := landDir(t.Context(), dir, callRun)
			switch {
			case !tc.ok:
				if err == nil || got == bDir || !strings.Contains(err.Error(), dir+"'s .git") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("landDir = %q, %v; want one line refusing it, naming %s", got, err, dir)
				}
			case err != nil:
				t.Fatalf("landDir: %v", err)
			case (got == bDir) != tc.same:
				t.Fatalf("landDir = %q; the other checkout's is %q (want the same: %v)", got, bDir, tc.same)
			}
		})
	}
}
