package codesnap_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
