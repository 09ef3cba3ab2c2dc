//go:build linux

package isolate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestForgetCopyGitFollowsNoLink: a writer in place that can write the
// common git dir (no user namespaces to hold it) replaces a copy's git
// directory with a link to a directory of the user's holding what a copy's
// git directory would (gitdir, objects): forgetting that copy's git state
// removes nothing there.
func TestForgetCopyGitFollowsNoLink(t *testing.T) {
	iso := testIsolator(t)
	dir := newRepo(t)
	ws := prepare(t, iso, dir, "G", true)
	if ws.Mode != ModeWorktree || ws.gitDir == "" {
		t.Fatalf("no worktree copy: %+v", ws.Mode)
	}
	victim := filepath.Join(t.TempDir(), "users")
	if err := os.Rename(ws.gitDir, victim); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(victim, "objects", "x"), "")
	write(t, filepath.Join(victim, "precious"), "mine\n")
	if err := os.Symlink(victim, ws.gitDir); err != nil {
		t.Fatal(err)
	}
	err := ForgetCopyGit(context.Background(), dir, Copy{Mode: ModeWorktree, Path: ws.Root})
	if got := read(t, filepath.Join(victim, "precious")); got != "mine\n" {
		t.Fatalf("forgetting the copy's git state removed a file through a link (err %v): precious = %q", err, got)
	}
	if err == nil {
		t.Fatal("a linked git directory was taken for the copy's and put back without an error")
	}
}
