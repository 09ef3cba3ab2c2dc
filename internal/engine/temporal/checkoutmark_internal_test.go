package temporal

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@l", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@l")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestCheckoutMark: a checkout's mark moves with it and is nobody
// else's: not a clone's, not a copy's (a secret file in .git, as brood
// kept before, was copied with it: review35 P3-9), not a linked
// worktree's, not a tree's whose .git file or link points into the
// checkout's git directory.
func TestCheckoutMark(t *testing.T) {
	base := t.TempDir()
	a := filepath.Join(base, "a")
	if err := os.MkdirAll(filepath.Join(a, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, a, "init", "-q")
	os.WriteFile(filepath.Join(a, "f"), []byte("x\n"), 0o644)
	gitIn(t, a, "add", "-A")
	gitIn(t, a, "commit", "-qm", "i")
	mark := checkoutMark(a)
	if len(mark) != 64 || checkoutMark(a) != mark || checkoutMark(filepath.Join(a, "sub")) != mark {
		t.Fatalf("marks %q, then %q, from a subdirectory %q; want one, stable", mark, checkoutMark(a), checkoutMark(filepath.Join(a, "sub")))
	}
	gitIn(t, base, "clone", "-q", a, "clone")
	if out, err := exec.Command("cp", "-a", a, filepath.Join(base, "copy")).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	gitIn(t, a, "worktree", "add", "-q", filepath.Join(base, "wt"))
	moved := filepath.Join(base, "moved")
	if err := os.Rename(a, moved); err != nil {
		t.Fatal(err)
	}
	// Trees that point into the moved checkout's git directory.
	forged := filepath.Join(base, "forged")
	os.MkdirAll(forged, 0o755)
	os.WriteFile(filepath.Join(forged, ".git"), []byte("gitdir: "+filepath.Join(moved, ".git")+"\n"), 0o644)
	linked := filepath.Join(base, "linked")
	os.MkdirAll(linked, 0o755)
	os.Symlink(filepath.Join(moved, ".git"), filepath.Join(linked, ".git"))
	for _, c := range []struct {
		dir  string
		same bool
	}{
		{"moved", true},
		{"clone", false},
		{"copy", false},
		{"wt", false},
		{"forged", false},
		{"linked", false},
	} {
		got := checkoutMark(filepath.Join(base, c.dir))
		if (got == mark) != c.same {
			t.Errorf("%s: mark %q, the submitter's %q; want the same: %v", c.dir, got, mark, c.same)
		}
	}
}
