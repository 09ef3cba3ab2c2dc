package isolate

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/gitx"
)

// TestWorktreeLandingTrustsNoCopyIndex: a worktree copy's landing adds the
// copy's files to the parent's own copy of its index: what its child did
// to its copy's index (commits, entries marked skip-worktree or
// assume-unchanged, entries removed) changes nothing of the patch, which
// holds every file the child changed.
func TestWorktreeLandingTrustsNoCopyIndex(t *testing.T) {
	iso := testIsolator(t)
	dir := newRepo(t)
	ws := prepare(t, iso, dir, "t1", true)
	if ws.Mode != ModeWorktree {
		t.Fatalf("mode %s, want worktree (note %q)", ws.Mode, ws.Note)
	}
	runIsolated(t, ws, `set -e
echo new > new.txt
git add new.txt
git -c user.name=c -c user.email=c@c commit -qm child
git update-index --skip-worktree del.txt
echo del-child > del.txt
git update-index --assume-unchanged sub/b.txt
echo b-child > sub/b.txt
git rm -q --cached dir/x.txt
echo x-child > dir/x.txt
`)
	out, err := ws.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !out.Applied || out.Conflict != "" {
		t.Fatalf("outcome %+v", out)
	}
	slices.Sort(out.Files)
	if want := []string{"del.txt", "dir/x.txt", "new.txt", "sub/b.txt"}; !slices.Equal(out.Files, want) {
		t.Errorf("files %v, want %v", out.Files, want)
	}
	for p, want := range map[string]string{"new.txt": "new\n", "del.txt": "del-child\n", "sub/b.txt": "b-child\n", "dir/x.txt": "x-child\n"} {
		if got := read(t, filepath.Join(dir, p)); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}

// TestWorktreeGitHeld: a worktree writer given its copy's git directory
// (HoldGit) writes its index, HEAD and objects there, while its
// commondir, gitdir and config.worktree are read-only in its own mount
// namespace (written, replaced or removed: refused), and its objects go to
// its own directory, not the common dir's; after its landing its copy's
// git directory names none of them (the user's git walks every
// worktree's HEAD).
func TestWorktreeGitHeld(t *testing.T) {
	iso := testIsolator(t)
	if !iso.Support().Overlay {
		t.Skipf("needs user and mount namespaces: %s", iso.Support().Why)
	}
	dir := newRepo(t)
	ws := prepare(t, iso, dir, "t1", true)
	if err := ws.HoldGit(); err != nil {
		t.Fatal(err)
	}
	objects := git(t, dir, "count-objects")
	runIsolated(t, ws, `set -e
GD=$(git rev-parse --absolute-git-dir)
test "$GIT_OBJECT_DIRECTORY" = "$GD/objects"
for f in commondir gitdir config.worktree; do
  test -e "$GD/$f"
  if { echo x >> "$GD/$f"; } 2>/dev/null; then echo "appended to $f"; exit 1; fi
  if { printf x > "$GD/t.tmp" && mv -f "$GD/t.tmp" "$GD/$f"; } 2>/dev/null; then echo "replaced $f"; exit 1; fi
  if rm -f "$GD/$f" 2>/dev/null; then echo "removed $f"; exit 1; fi
done
rm -f "$GD/t.tmp"
echo new > new.txt
git add new.txt
git -c user.name=c -c user.email=c@c commit -qm child
test -n "$(ls "$GD/objects")"
`)
	if now := git(t, dir, "count-objects"); now != objects {
		t.Errorf("the child's commit wrote the common dir's objects: %s, was %s", now, objects)
	}
	out, err := ws.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !out.Applied || !slices.Equal(out.Files, []string{"new.txt"}) || read(t, filepath.Join(dir, "new.txt")) != "new\n" {
		t.Errorf("outcome %+v, new.txt %q", out, read(t, filepath.Join(dir, "new.txt")))
	}
	// The child's commit, its objects in a directory of its own, is no
	// longer named by the copy: the user's git walks every worktree's HEAD.
	if _, err := gitx.Run(context.Background(), dir, "rev-list", "--all"); err != nil {
		t.Errorf("git rev-list --all in the user's tree after the landing: %v", err)
	}
}
