package codesnap_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/codesnap"
)

// oldGit runs git in dir (its stdin in), failing the test on an error.
func oldGit(t *testing.T, dir, in string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestMigrateClonesDropsOldDirtyState (review18 N1): a worker upgraded
// in place keeps the clones its earlier version made, into which that
// layout indexed every submitter's dirty state (its pack, and loose
// objects), so any later call's child read them through its alternates.
// A clone made that way (no layout marker) is pruned of what its refs do
// not reach, its fetched history kept, and marked, once; a clone of the
// new layout is left as it is.
func TestMigrateClonesDropsOldDirtyState(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	oldGit(t, src, "", "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("committed\n"), 0o600)
	oldGit(t, src, "", "add", "a.txt")
	oldGit(t, src, "", "commit", "-q", "-m", "base")
	base := oldGit(t, src, "", "rev-parse", "HEAD")

	cacheDir := t.TempDir()
	old := filepath.Join(cacheDir, "repos", "0123456789abcdef0123.git")
	newer := filepath.Join(cacheDir, "repos", "fedcba9876543210fedc.git")
	secrets := map[string]string{}
	for _, repo := range []string{old, newer} {
		oldGit(t, cacheDir, "", "init", "-q", "--bare", repo)
		oldGit(t, repo, "", "fetch", "-q", "--no-tags", "--", src, "+refs/heads/*:refs/remotes/origin/*")
		oldGit(t, repo, "", "update-ref", "refs/brood/bases/"+base, base)
		// The old layout: a submitter's dirty pack indexed into the clone,
		// and a loose dirty object.
		packed := oldGit(t, repo, "submitter A's uncommitted API_KEY=packed-"+repo+"\n", "hash-object", "-w", "--stdin")
		pack := oldGit(t, repo, packed+"\n", "pack-objects", "-q", filepath.Join(repo, "objects", "pack", "pack"))
		oldGit(t, repo, "", "prune-packed")
		if _, err := os.Stat(filepath.Join(repo, "objects", "pack", "pack-"+pack+".pack")); err != nil {
			t.Fatal(err)
		}
		loose := oldGit(t, repo, "submitter B's untracked .env=loose-"+repo+"\n", "hash-object", "-w", "--stdin")
		secrets[repo+" packed"], secrets[repo+" loose"] = packed, loose
		ageObjects(t, repo)
	}
	if err := os.WriteFile(filepath.Join(newer, "brood-layout"), []byte("2 dirty-homes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	has := func(repo, obj string) bool {
		return exec.Command("git", "--git-dir="+repo, "cat-file", "-e", obj).Run() == nil
	}

	c := &codesnap.Cache{Dir: cacheDir}
	lines, err := c.MigrateClones(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], old) || !strings.Contains(lines[0], "pruned 2 object(s)") {
		t.Errorf("migration said %q; want one line naming %s and its 2 dirty objects", lines, old)
	}
	for _, kind := range []string{"packed", "loose"} {
		if has(old, secrets[old+" "+kind]) {
			t.Errorf("the old clone still holds a submitter's %s dirty object", kind)
		}
		if !has(newer, secrets[newer+" "+kind]) {
			t.Errorf("a clone of the new layout was pruned too (its %s object)", kind)
		}
	}
	if !has(old, base) || !has(old, base+":a.txt") {
		t.Errorf("the old clone lost its fetched history (base %s)", base)
	}
	if b, err := os.ReadFile(filepath.Join(old, "brood-layout")); err != nil || len(b) == 0 {
		t.Errorf("the migrated clone is not marked: %v", err)
	}
	if again, err := c.MigrateClones(ctx); err != nil || len(again) != 0 {
		t.Errorf("a second start migrated again: %q, %v", again, err)
	}
}

// ageObjects makes every object file of a git dir two hours old: written
// by a call long finished, not by one in flight.
func ageObjects(t *testing.T, repo string) {
	t.Helper()
	old := time.Now().Add(-2 * time.Hour)
	err := filepath.WalkDir(filepath.Join(repo, "objects"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// oldClone makes an old-layout clone in cacheDir (no marker) holding a
// dirty commit no ref reaches, aged two hours, and returns the clone
// and that commit.
func oldClone(t *testing.T, cacheDir string) (string, string) {
	t.Helper()
	src := t.TempDir()
	oldGit(t, src, "", "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("committed\n"), 0o600)
	oldGit(t, src, "", "add", "a.txt")
	oldGit(t, src, "", "commit", "-q", "-m", "base")
	repo := filepath.Join(cacheDir, "repos", "0123456789abcdef0123.git")
	oldGit(t, cacheDir, "", "init", "-q", "--bare", repo)
	oldGit(t, repo, "", "fetch", "-q", "--no-tags", "--", src, "+refs/heads/*:refs/remotes/origin/*")
	blob := oldGit(t, repo, "dirty edit\n", "hash-object", "-w", "--stdin")
	tree := oldGit(t, repo, "100644 blob "+blob+"\ta.txt\n", "mktree")
	dirty := oldGit(t, repo, "", "commit-tree", tree, "-p", "refs/remotes/origin/main", "-m", "dirty")
	ageObjects(t, repo)
	return repo, dirty
}

// holdShared creates path and holds a shared lock on it for the test.
func holdShared(t *testing.T, path string) *os.File {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMigrateClonesLeavesABorrowedClone (review21 P2-3): the cache is
// shared by every worker of the account; on a rolling upgrade a worker of
// the old version may be running a call whose checkout (or copy, dirty
// home, chain step) borrows the clone's objects, HEAD at a dirty commit
// no ref reaches. A new worker starting then leaves that clone as it is
// (one line, unmarked) and migrates it at a later start, once nothing
// holds it.
func TestMigrateClonesLeavesABorrowedClone(t *testing.T) {
	for _, held := range []string{"trees/key1.lock", "dirty/key2.lock", "jobs/job1/.lock", "chains/step1/.lock"} {
		t.Run(held, func(t *testing.T) {
			ctx := context.Background()
			cacheDir := t.TempDir()
			repo, dirty := oldClone(t, cacheDir)
			co := filepath.Join(cacheDir, "trees", "key1")
			oldGit(t, cacheDir, "", "clone", "-q", "--shared", "--no-checkout", repo, co)
			oldGit(t, co, "", "checkout", "-q", "--detach", dirty)
			lock := holdShared(t, filepath.Join(cacheDir, held))

			c := &codesnap.Cache{Dir: cacheDir}
			lines, err := c.MigrateClones(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != 1 || !strings.Contains(lines[0], repo) || !strings.Contains(lines[0], "left for a later start") {
				t.Errorf("migration said %q; want one line leaving %s for a later start", lines, repo)
			}
			if out, err := exec.Command("git", "-C", co, "cat-file", "-p", "HEAD:a.txt").CombinedOutput(); err != nil || string(out) != "dirty edit\n" {
				t.Errorf("the running call's checkout lost its objects: %v %s", err, out)
			}
			if _, err := os.Stat(filepath.Join(repo, "brood-layout")); err == nil {
				t.Errorf("a clone left for later is marked migrated")
			}

			lock.Close() // the call ends; the next start migrates it
			os.RemoveAll(co)
			lines, err = c.MigrateClones(ctx)
			if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "pruned 3 object(s)") {
				t.Errorf("the next start said %q, %v; want the clone pruned of its 3 dirty objects", lines, err)
			}
			if exec.Command("git", "--git-dir="+repo, "cat-file", "-e", dirty).Run() == nil {
				t.Errorf("the dirty commit is still in the clone after the later start")
			}
		})
	}
}

// TestMigrateClonesKeepsRecentObjects: an object no ref reaches that is
// younger than an hour may be one a worker of the old version is writing
// (outside the clone's lock): it stays, and the clone is not marked, so
// a later start prunes it.
func TestMigrateClonesKeepsRecentObjects(t *testing.T) {
	ctx := context.Background()
	cacheDir := t.TempDir()
	repo, _ := oldClone(t, cacheDir)
	fresh := oldGit(t, repo, "being written\n", "hash-object", "-w", "--stdin")
	freshPacked := oldGit(t, repo, "being indexed\n", "hash-object", "-w", "--stdin")
	oldGit(t, repo, freshPacked+"\n", "pack-objects", "-q", filepath.Join(repo, "objects", "pack", "pack"))
	oldGit(t, repo, "", "prune-packed")
	lines, err := (&codesnap.Cache{Dir: cacheDir}).MigrateClones(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "pruned 3 object(s)") || !strings.Contains(lines[0], "2 younger than an hour left for a later start") {
		t.Errorf("migration said %q; want 3 pruned, 2 left for a later start", lines)
	}
	for _, obj := range []string{fresh, freshPacked} {
		if exec.Command("git", "--git-dir="+repo, "cat-file", "-e", obj).Run() != nil {
			t.Errorf("an object written a moment ago (%s) was pruned", obj)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "brood-layout")); err == nil {
		t.Errorf("a clone still holding unreachable objects is marked migrated")
	}
}

// TestMigrateClonesFollowsNoSymlink (review21 P3): repos/<id>.git that is
// a symlink is no clone a worker made; its target is not pruned.
func TestMigrateClonesFollowsNoSymlink(t *testing.T) {
	ctx := context.Background()
	elsewhere := t.TempDir()
	target, dirty := oldClone(t, elsewhere)
	cacheDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cacheDir, "repos"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(cacheDir, "repos", "fedcba9876543210fedc.git")); err != nil {
		t.Fatal(err)
	}
	lines, err := (&codesnap.Cache{Dir: cacheDir}).MigrateClones(ctx)
	if err != nil || len(lines) != 0 {
		t.Errorf("migration said %q, %v; want nothing", lines, err)
	}
	if exec.Command("git", "--git-dir="+target, "cat-file", "-e", dirty).Run() != nil {
		t.Errorf("the symlink's target was pruned")
	}
	if _, err := os.Stat(filepath.Join(target, "brood-layout")); err == nil {
		t.Errorf("the symlink's target was marked")
	}
}
