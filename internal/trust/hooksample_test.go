package trust

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHookSamplesNotKept: git's stock hooks/*.sample (git runs a hook
// only by a name githooks(5) lists) are neither kept in a state nor taken
// for changes, in .git/hooks and a submodule's git dir alike; a sample a
// child renames into place is a new hook, and the put-back removes it.
func TestHookSamplesNotKept(t *testing.T) {
	for _, dir := range []string{".git/hooks", ".git/modules/s/hooks"} {
		t.Run(dir, func(t *testing.T) {
			top := t.TempDir()
			hooks := filepath.Join(top, filepath.FromSlash(dir))
			if err := os.MkdirAll(hooks, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"HEAD", "../HEAD"} {
				_ = os.WriteFile(filepath.Join(hooks, f), []byte("ref: refs/heads/main\n"), 0o644)
			}
			sample := filepath.Join(hooks, "pre-commit.sample")
			if err := os.WriteFile(sample, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			git := filepath.Join(top, ".git")
			c, err := SnapshotPaths(top, GitConfigTops(top, git, git))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.entries[dir+"/pre-commit.sample"]; ok {
				t.Errorf("the state keeps %s/pre-commit.sample", dir)
			}
			if err := os.Rename(sample, filepath.Join(hooks, "pre-commit")); err != nil {
				t.Fatal(err)
			}
			changed, err := c.Changes()
			if err != nil || !slices.Contains(changed, dir+"/pre-commit") {
				t.Fatalf("Changes = %q, %v: want %s/pre-commit among them", changed, err, dir)
			}
			if failed, err := c.Restore(changed); err != nil || len(failed) > 0 {
				t.Fatalf("Restore: %v %v", failed, err)
			}
			if _, err := os.Lstat(filepath.Join(hooks, "pre-commit")); err == nil {
				t.Errorf("the renamed sample %s/pre-commit is still in place", dir)
			}
		})
	}
}
