package isolate

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChildDoesNotSeeIgnoredFiles: an isolated child sees the tree as a
// checkout of the spawn snapshot would show it: dirty and untracked files
// yes, gitignored ones (.env, node_modules, other tasks' records) no, and
// ignored files it writes itself never come back. Its own state directory,
// inside an ignored one, stays reachable.
func TestChildDoesNotSeeIgnoredFiles(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			dir := newRepo(t)
			write(t, filepath.Join(dir, "sub/.env"), "nested secret\n")
			write(t, filepath.Join(dir, ".brood/dispatch/OTHER/session.jsonl"), "another task's transcript\n")
			ws := prepare(t, iso, dir, "IGN", m.force)
			state := filepath.Join(dir, ".brood", "dispatch", "IGN")
			runIsolated(t, ws, `
test ! -e .env || { echo "sees .env"; exit 3; }
test ! -e sub/.env || { echo "sees sub/.env"; exit 3; }
test ! -e node_modules || { echo "sees node_modules"; exit 3; }
test ! -e .brood/dispatch/OTHER || { echo "sees another task"; exit 3; }
grep -q "a1 dirty" a.txt || { echo "dirty file missing"; exit 4; }
test -e u.txt || { echo "untracked file missing"; exit 4; }
`+stateCheck(m.name, state)+`
echo child-secret > .env
echo changed >> u.txt
`)
			out, err := ws.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !out.Applied || !slices.Equal(out.Files, []string{"u.txt"}) {
				t.Fatalf("outcome %+v, want only u.txt applied", out)
			}
			if got := read(t, filepath.Join(dir, ".env")); got != "secret\n" {
				t.Errorf("the parent's .env is now %q", got)
			}
			if len(out.BaseMoved) != 0 {
				t.Errorf("nothing moved the base, yet %v", out.BaseMoved)
			}
		})
	}
}

// stateCheck is the script line that checks the child reaches its own state
// directory (an overlay child reaches it at its real path).
func stateCheck(mode, state string) string {
	if mode != "overlay" {
		return ""
	}
	return `test -d '` + state + `/isolate' || { echo "own state dir unreachable"; exit 5; }`
}

// TestBaseMoved: parent edits made between the spawn and apply-back are
// named, never counted as the child's; a worktree child did not see them,
// and the patch applies whole or, on the same lines, not at all.
func TestBaseMoved(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		for _, clash := range []bool{false, true} {
			t.Run(m.name+map[bool]string{false: "/apart", true: "/clash"}[clash], func(t *testing.T) {
				dir := newRepo(t)
				ws := prepare(t, iso, dir, "MOVED", m.force)
				if _, err := ws.snap.wait(); err != nil {
					t.Fatal(err)
				}
				// The parent edits sub/b.txt and adds a file; with clash it
				// also edits the line the child will.
				write(t, filepath.Join(dir, "sub/b.txt"), strings.Replace(lines("b", 10), "b3\n", "b3 parent\n", 1))
				write(t, filepath.Join(dir, "new-by-parent.txt"), "p\n")
				if clash {
					write(t, filepath.Join(dir, "a.txt"), strings.Replace(read(t, filepath.Join(dir, "a.txt")), "a7\n", "a7 parent\n", 1))
				}
				script := `sed -i 's/^a7.*$/a7 child/' a.txt`
				if m.name == "worktree" {
					script += `
grep -q "b3 parent" sub/b.txt && { echo "the frozen copy moved"; exit 3; }
test ! -e new-by-parent.txt || { echo "the frozen copy moved"; exit 3; }`
				}
				runIsolated(t, ws, script)
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				want := []string{"new-by-parent.txt", "sub/b.txt"}
				if clash {
					want = []string{"a.txt", "new-by-parent.txt", "sub/b.txt"}
				}
				if !slices.Equal(out.BaseMoved, want) || out.Frozen != (m.name == "worktree") {
					t.Fatalf("base moved %v frozen %v, want %v", out.BaseMoved, out.Frozen, want)
				}
				if !slices.Equal(out.Files, []string{"a.txt"}) {
					t.Errorf("the child's files are %v: parent edits counted as its own", out.Files)
				}
				a := read(t, filepath.Join(dir, "a.txt"))
				if out.Applied == clash || strings.Contains(a, "a7 child") == clash {
					t.Errorf("clash=%v: applied=%v, a.txt %q", clash, out.Applied, a)
				}
				if clash && (!strings.Contains(a, "a7 parent") || out.KeptAt == "") {
					t.Errorf("refused patch: a.txt %q kept at %q", a, out.KeptAt)
				}
				if _, err := os.Stat(filepath.Join(dir, "new-by-parent.txt")); err != nil {
					t.Errorf("the parent's file is gone: %v", err)
				}
			})
		}
	}
}

// TestSnapshotTree: the spawn snapshot is the work tree as git would
// commit it after `git add -A`: a staged-only change, a worktree edit over
// a staged one, a deletion, an untracked file and an untracked repository
// (a gitlink) are in it; ignored files are not, and the user's index is
// never written.
func TestSnapshotTree(t *testing.T) {
	dir := t.TempDir()
	git := func(d string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git(dir, "init", "-q")
	for f, c := range map[string]string{"staged.txt": "s0\n", "both.txt": "b0\n", "gone.txt": "g\n", ".gitignore": ".env\nbuild/\n"} {
		write(t, filepath.Join(dir, f), c)
	}
	git(dir, "add", "-A")
	git(dir, "commit", "-qm", "init")
	write(t, filepath.Join(dir, "staged.txt"), "s1\n")
	write(t, filepath.Join(dir, "both.txt"), "b1\n")
	git(dir, "add", "staged.txt", "both.txt")
	write(t, filepath.Join(dir, "both.txt"), "b2\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	write(t, filepath.Join(dir, "new/u.txt"), "u\n")
	write(t, filepath.Join(dir, ".env"), "secret\n")
	write(t, filepath.Join(dir, "build/out.bin"), "bin\n")
	write(t, filepath.Join(dir, "nested/x"), "x\n")
	git(filepath.Join(dir, "nested"), "init", "-q")
	git(filepath.Join(dir, "nested"), "add", "x")
	git(filepath.Join(dir, "nested"), "commit", "-qm", "x")
	// A repository with no commit has no gitlink: left out, not an
	// error (update-index: "empty: is a directory").
	git(dir, "init", "-q", "empty")
	write(t, filepath.Join(dir, "empty/e.txt"), "e\n")
	before, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	r, err := openRepo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := takeSnapshot(context.Background(), r, filepath.Join(t.TempDir(), "i"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := git(dir, "ls-tree", "-r", "--name-only", tree)
	if want := ".gitignore\nboth.txt\nnested\nnew/u.txt\nstaged.txt\n"; got != want {
		t.Fatalf("snapshot holds\n%s\nwant\n%s", got, want)
	}
	for f, want := range map[string]string{"staged.txt": "s1\n", "both.txt": "b2\n"} {
		if c := git(dir, "cat-file", "-p", tree+":"+f); c != want {
			t.Errorf("%s in the snapshot is %q, want %q", f, c, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); !bytes.Equal(before, after) {
		t.Error("the user's index was rewritten")
	}
}

// TestBaseMovedWithoutSecondTree: at finish the status walk and the stamps
// of the paths it lists stand in for a second tree when nothing moved; any
// move (a dirty file edited again at the same size, a new untracked file,
// a deletion, the index rewritten) and a file changed too close to the
// spawn's stamp (racy) make it write the tree after all.
func TestBaseMovedWithoutSecondTree(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	setup := func(t *testing.T) (string, *repo, *snapshot, []string) {
		dir := newRepo(t)
		for _, f := range []string{"a.txt", "u.txt", "staged.txt"} {
			if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
				t.Fatal(err)
			}
		}
		r, err := openRepo(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, st, err := (&Isolator{}).startSnapshot(context.Background(), r, filepath.Join(t.TempDir(), "spawn.index"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snap.wait(); err != nil {
			t.Fatal(err)
		}
		return dir, r, snap, st.changed
	}
	for _, tt := range []struct {
		name     string
		move     func(t *testing.T, dir string)
		wantSame bool
	}{
		{"nothing moved", func(*testing.T, string) {}, true},
		{"dirty file edited at the same size", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a.txt"), strings.Replace(read(t, filepath.Join(dir, "a.txt")), "a1 dirty", "a1 DIRTY", 1))
		}, false},
		{"clean file edited", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "sub/b.txt"), "changed\n") }, false},
		{"new untracked file", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "new.txt"), "n\n") }, false},
		{"untracked file removed", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "u.txt")) }, false},
		{"index rewritten", func(t *testing.T, dir string) { git(t, dir, "add", "a.txt") }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, r, snap, dirty := setup(t)
			tt.move(t, dir)
			tree, same, err := takeSnapshotUnless(context.Background(), r, filepath.Join(t.TempDir(), "finish.index"), dirty, snap.print)
			if err != nil {
				t.Fatal(err)
			}
			if same != tt.wantSame {
				t.Fatalf("same = %v, want %v", same, tt.wantSame)
			}
			base, _ := snap.wait()
			if !same && tt.name != "index rewritten" && tree == base {
				t.Errorf("a move gave the spawn's tree %s", tree)
			}
		})
	}
	t.Run("racy", func(t *testing.T) {
		dir := newRepo(t) // its files were just written: too fresh to trust a stamp
		r, err := openRepo(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, st, err := (&Isolator{}).startSnapshot(context.Background(), r, filepath.Join(t.TempDir(), "spawn.index"))
		if err != nil {
			t.Fatal(err)
		}
		snap.wait()
		if _, same, err := takeSnapshotUnless(context.Background(), r, filepath.Join(t.TempDir(), "f.index"), st.changed, snap.print); err != nil || same {
			t.Errorf("a fresh file's stamp was trusted: same=%v %v", same, err)
		}
	})
}
