package dispatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestTreeStateSeesLinksAsLinks: the writer's before and after walks see a
// symbolic link as its target, not as what it points to: a link
// retargeted from one directory to another (both unreadable as files) is
// a change, and a link to a FIFO is fingerprinted without opening it (the
// parent would block).
func TestTreeStateSeesLinksAsLinks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	cases := []struct {
		name   string
		before func(t *testing.T, root string)
		change func(t *testing.T, root string)
	}{
		{"a link retargeted from a directory to another",
			func(t *testing.T, root string) { mustDo(t, os.Symlink("vendor", filepath.Join(root, "lib"))) },
			func(t *testing.T, root string) {
				mustDo(t, os.Remove(filepath.Join(root, "lib")))
				mustDo(t, os.Symlink(".git", filepath.Join(root, "lib")))
			}},
		{"a link to a FIFO",
			func(t *testing.T, root string) {},
			func(t *testing.T, root string) {
				mustDo(t, syscall.Mkfifo(filepath.Join(root, "vendor", "fifo"), 0o600))
				mustDo(t, os.Symlink("vendor/fifo", filepath.Join(root, "lib")))
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			mustDo(t, os.MkdirAll(filepath.Join(root, "vendor"), 0o755))
			mustDo(t, os.WriteFile(filepath.Join(root, "vendor", "v.go"), []byte("package v\n"), 0o644))
			c.before(t, root)
			before, err := SnapshotTree(t.Context(), root)
			mustDo(t, err)
			c.change(t, root)
			done := make(chan *TreeState, 1)
			go func() {
				after, _ := SnapshotTree(t.Context(), root)
				done <- after
			}()
			var after *TreeState
			select {
			case after = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the walk blocked on the link")
			}
			if after == nil || !slices.Contains(Changed(before, after), "lib") {
				t.Errorf("lib not seen as changed: before %v after %v", before.Files, after)
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
