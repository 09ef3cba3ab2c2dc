package trust

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestIsGitGuardedPath: the tool guard's rule covers every path
// IsGitConfigPath does under a .git (one list of parts), and more: .git
// itself, a submodule's or worktree's config and pointer files.
func TestIsGitGuardedPath(t *testing.T) {
	for rel, want := range map[string]bool{
		".git": true, "sub/.git": true, ".git/config": true, ".git/config.worktree": true, ".git/commondir": true,
		".git/hooks/pre-commit": true, ".git/info/exclude": true, ".git/rebase-merge/git-rebase-todo": true,
		".git/sequencer/todo": true, ".git/modules/x/config": true, ".git/worktrees/w/gitdir": true,
		".git/objects/ab/cd": false, ".git/refs/heads/main": false, ".git/index": false, ".gitmodules": false,
		"src/config": false, "hooks/x": false, "gitdir": false,
	} {
		if got := IsGitGuardedPath(rel); got != want {
			t.Errorf("IsGitGuardedPath(%q) = %v, want %v", rel, got, want)
		}
		if IsGitConfigPath(rel) && rel != ".gitmodules" && !IsGitGuardedPath(rel) {
			t.Errorf("%q is git configuration but not guarded", rel)
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
		"../../r/.git/objects/info/alternates", "../../r/.git/objects/info/http-alternates", "../../r/.git/shallow", "../../r/.git/refs/replace",
		"../../r/.git/modules",
		"../../r/.git/worktrees/tree/config.worktree", "../../r/.git/worktrees/tree/commondir", "../../r/.git/worktrees/tree/rebase-merge",
		"../../r/.git/worktrees/tree/rebase-apply", "../../r/.git/worktrees/tree/sequencer", ".gitmodules"}
	if !slices.Equal(got, want) {
		t.Fatalf("tops %v, want %v", got, want)
	}
}

// TestNestedGitConfig: the configuration of a repository nested in the
// work tree is watched like the top's: a pre-existing one's config change
// is put back, a .git file's gitdir line too, and a nested repository
// made after the snapshot (Widen) loses its config, hooks, info and
// .gitmodules — its objects and refs stay.
func TestNestedGitConfig(t *testing.T) {
	top := t.TempDir()
	git := filepath.Join(top, ".git")
	write(t, filepath.Join(git, "config"), "[core]\n")
	write(t, filepath.Join(top, "old", ".git", "config"), "[core]\n\tbare = false\n")
	write(t, filepath.Join(top, "old", ".git", "objects", "ab", "cd"), "obj")
	write(t, filepath.Join(top, "mod", ".git"), "gitdir: ../.git/modules/mod\n")
	write(t, filepath.Join(top, "src", "config"), "not git\n")
	nested, err := NestedGitTops(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"old/.git/config", "old/.git/hooks", "old/.gitmodules", "mod/.git", "mod/.gitmodules"} {
		if !slices.Contains(nested, want) {
			t.Errorf("NestedGitTops = %v, want %s in it", nested, want)
		}
	}
	if slices.ContainsFunc(nested, func(s string) bool { return s == ".git/config" || s == "src/config" }) {
		t.Errorf("NestedGitTops = %v: the top's own or a non-git file", nested)
	}
	c, err := SnapshotPaths(top, append(GitConfigTops(top, git, git), nested...))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(top, "old", ".git", "config"), "[core]\n\tfsmonitor = ../evil\n")
	write(t, filepath.Join(top, "old", ".git", "objects", "ef", "01"), "new obj")
	// Review 16 F5: a nested repository's replace refs and alternates.
	write(t, filepath.Join(top, "old", ".git", "refs", "replace", "ab"), "cd\n")
	write(t, filepath.Join(top, "old", ".git", "objects", "info", "alternates"), "/tmp/evil/objects\n")
	write(t, filepath.Join(top, "mod", ".git"), "gitdir: /home/u/.cache/evil\n")
	write(t, filepath.Join(top, "a", "new", ".git", "config"), "[core]\n\tfsmonitor = ../evil\n")
	write(t, filepath.Join(top, "a", "new", ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	write(t, filepath.Join(top, "a", "new", ".git", "HEAD"), "ref: refs/heads/main\n")
	now, err := NestedGitTops(top)
	if err != nil {
		t.Fatal(err)
	}
	added := c.Widen(now)
	if !slices.Equal(added, []string{"a/new/.gitmodules", "a/new/.git/config", "a/new/.git/config.worktree", "a/new/.git/commondir", "a/new/.git/hooks", "a/new/.git/info", "a/new/.git/rebase-merge", "a/new/.git/rebase-apply", "a/new/.git/sequencer",
		"a/new/.git/objects/info/alternates", "a/new/.git/objects/info/http-alternates", "a/new/.git/shallow", "a/new/.git/refs/replace"}) {
		t.Errorf("Widen added %v", added)
	}
	changed, err := c.Changes()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/new/.git/config", "a/new/.git/hooks", "a/new/.git/hooks/pre-commit", "mod/.git", "old/.git/config",
		"old/.git/objects/info/alternates", "old/.git/refs/replace", "old/.git/refs/replace/ab"}
	if !slices.Equal(changed, want) {
		t.Fatalf("Changes = %v, want %v", changed, want)
	}
	if failed, err := c.Restore(changed); err != nil || len(failed) > 0 {
		t.Fatalf("Restore: %v %v", failed, err)
	}
	for f, want := range map[string]string{"old/.git/config": "[core]\n\tbare = false\n", "mod/.git": "gitdir: ../.git/modules/mod\n", "a/new/.git/HEAD": "ref: refs/heads/main\n", "old/.git/objects/ef/01": "new obj"} {
		if b, err := os.ReadFile(filepath.Join(top, f)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", f, b, err, want)
		}
	}
	for _, gone := range []string{"a/new/.git/config", "a/new/.git/hooks"} {
		if _, err := os.Lstat(filepath.Join(top, gone)); err == nil {
			t.Errorf("%s, made after the snapshot, is still there", gone)
		}
	}
}

// TestGitStoreAndModulesRestored: what changes the objects git reads for
// a name (a replace ref, alternates, shallow, grafts) and a submodule's git
// directory a child made, in a .git/modules that was missing or that was
// there, are changes the guard removes; a submodule's own config and
// hooks are watched; a commit's objects are not.
func TestGitStoreAndModulesRestored(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprint("modules existed ", existing), func(t *testing.T) {
			top := t.TempDir()
			git := filepath.Join(top, ".git")
			write(t, filepath.Join(git, "config"), "[core]\n")
			write(t, filepath.Join(git, "shallow"), "aaaa\n")
			if existing {
				write(t, filepath.Join(git, "modules", "a", "HEAD"), "ref: refs/heads/main\n")
				write(t, filepath.Join(git, "modules", "a", "config"), "[core]\n")
			}
			c, err := SnapshotGit(top, git, GitConfigTops(top, git, git))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(git, "refs", "replace", "abcd"), "ef01\n")
			write(t, filepath.Join(git, "objects", "info", "alternates"), "/elsewhere/objects\n")
			write(t, filepath.Join(git, "info", "grafts"), "aaaa\n")
			write(t, filepath.Join(git, "shallow"), "bbbb\n")
			write(t, filepath.Join(git, "modules", "sub", "HEAD"), "ref: refs/heads/main\n")
			write(t, filepath.Join(git, "modules", "sub", "config"), "[core]\n\tworktree = ../../../sub\n")
			write(t, filepath.Join(git, "modules", "sub", "hooks", "post-checkout"), "#!/bin/sh\n")
			write(t, filepath.Join(git, "objects", "ab", "cdef"), "object")
			if existing {
				write(t, filepath.Join(git, "modules", "a", "hooks", "post-checkout"), "#!/bin/sh\n")
			}
			c.Widen(c.ModuleTops())
			changed, err := c.Changes()
			if err != nil {
				t.Fatal(err)
			}
			if failed, err := c.Restore(changed); err != nil || len(failed) > 0 {
				t.Fatalf("restore: %v %v", failed, err)
			}
			gone := []string{"refs/replace/abcd", "objects/info/alternates", "info/grafts", "modules/sub/hooks/post-checkout", "modules/sub/config"}
			if existing {
				gone = append(gone, "modules/a/hooks/post-checkout")
			}
			for _, g := range gone {
				if _, err := os.Lstat(filepath.Join(git, g)); err == nil {
					t.Errorf(".git/%s is still there (changes %v)", g, changed)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(git, "shallow")); string(b) != "aaaa\n" {
				t.Errorf("shallow after restore: %q", b)
			}
			if _, err := os.Stat(filepath.Join(git, "objects", "ab", "cdef")); err != nil {
				t.Error("an object was removed")
			}
		})
	}
}

// TestGitBroodIsNotConfiguration: brood keeps no record under the git
// dir (they are in the user's state directory, taskdir.CheckoutState), so
// a .git/brood is nothing the guard watches: one a writer makes, a link
// into the work tree included, or a record written in one that was there,
// is no change of the repository's configuration (the guard once removed
// brood's own first records made during a writer's run and blamed the
// writer: review34 P3-1).
func TestGitBroodIsNotConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before bool
	}{
		{"absent, made a link", false},
		{"a directory, written", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			git := filepath.Join(top, ".git")
			write(t, filepath.Join(git, "config"), "[core]\n")
			if tc.before {
				write(t, filepath.Join(git, "brood", "fleet", "x.json"), "{}")
			}
			c, err := SnapshotPaths(top, GitConfigTops(top, git, git))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.before {
				write(t, filepath.Join(top, "notes", "keep"), "")
				if err := os.Symlink("../notes", filepath.Join(git, "brood")); err != nil {
					t.Fatal(err)
				}
			} else {
				write(t, filepath.Join(git, "brood", "fleet", "y.json"), "{}")
			}
			changes, err := c.Changes()
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(changes, func(p string) bool { return strings.HasPrefix(p, ".git/brood") }) {
				t.Fatalf("Changes = %v: .git/brood taken for git configuration", changes)
			}
		})
	}
}
