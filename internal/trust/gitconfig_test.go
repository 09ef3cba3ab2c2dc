package trust

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestIsGitConfigPath(t *testing.T) {
	for rel, want := range map[string]bool{
		".git/config": true, ".git/config.worktree": true, ".git/commondir": true, ".git/rebase-merge/git-rebase-todo": true, ".git/sequencer/todo": true, ".git/hooks/pre-commit": true, ".git/hooks": true,
		".git/info/attributes": true, ".git/info/exclude": true, ".gitmodules": true, "sub/.gitmodules": true,
		"sub/.git/hooks/post-checkout": true,
		".git/objects/ab/cd":           false, ".git/refs/heads/main": false, ".git/index": false, ".git/logs/HEAD": false,
		".git/COMMIT_EDITMSG": false, ".gitignore": false, ".gitattributes": false, "src/config": false, "hooks/x": false,
	} {
		if got := IsGitConfigPath(rel); got != want {
			t.Errorf("IsGitConfigPath(%q) = %v, want %v", rel, got, want)
		}
		if want && !IsConfigPath(rel) {
			t.Errorf("IsConfigPath(%q) = false for git configuration", rel)
		}
	}
}

// TestGitConfigSnapshotRestores: a hook added, the config rewritten and
// .gitmodules added are seen as changes and put back; a commit's objects
// and refs are not watched.
func TestGitConfigSnapshotRestores(t *testing.T) {
	top := t.TempDir()
	git := filepath.Join(top, ".git")
	write(t, filepath.Join(git, "config"), "[core]\n\tbare = false\n")
	write(t, filepath.Join(git, "hooks", "pre-commit.sample"), "#!/bin/sh\n")
	write(t, filepath.Join(git, "info", "exclude"), "*.log\n")
	c, err := SnapshotPaths(top, GitConfigTops(top, git, git))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(git, "config"), "[core]\n\tfsmonitor = .git/evil\n")
	write(t, filepath.Join(git, "hooks", "pre-commit"), "#!/bin/sh\ntouch /tmp/x\n")
	write(t, filepath.Join(top, ".gitmodules"), "[submodule \"x\"]\n")
	write(t, filepath.Join(git, "objects", "ab", "cdef"), "object")
	write(t, filepath.Join(git, "refs", "heads", "main"), "0000\n")
	changed, err := c.Changes()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".git/config", ".git/hooks/pre-commit", ".gitmodules"}
	if !slices.Equal(changed, want) {
		t.Fatalf("changes %v, want %v", changed, want)
	}
	if failed, err := c.Restore(changed); err != nil || len(failed) > 0 {
		t.Fatalf("restore: %v %v", failed, err)
	}
	if b, _ := os.ReadFile(filepath.Join(git, "config")); string(b) != "[core]\n\tbare = false\n" {
		t.Errorf("config after restore: %q", b)
	}
	for _, p := range []string{filepath.Join(git, "hooks", "pre-commit"), filepath.Join(top, ".gitmodules")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(git, "objects", "ab", "cdef")); err != nil {
		t.Error("an object was removed")
	}
}

func TestGitConfigTopsOfALinkedWorktree(t *testing.T) {
	got := GitConfigTops("/w/tree", "/r/.git/worktrees/tree", "/r/.git")
	want := []string{"../../r/.git/config", "../../r/.git/config.worktree", "../../r/.git/commondir", "../../r/.git/hooks", "../../r/.git/info",
		"../../r/.git/rebase-merge", "../../r/.git/rebase-apply", "../../r/.git/sequencer",
		"../../r/.git/worktrees/tree/config.worktree", "../../r/.git/worktrees/tree/commondir", "../../r/.git/worktrees/tree/rebase-merge",
		"../../r/.git/worktrees/tree/rebase-apply", "../../r/.git/worktrees/tree/sequencer", ".gitmodules"}
	if !slices.Equal(got, want) {
		t.Fatalf("tops %v, want %v", got, want)
	}
}
