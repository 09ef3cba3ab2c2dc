package codesnap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestNestedRepositories (fleetqa4 P2-1): a committed submodule, an
// untracked directory that is a repository of its own and one with no
// commit yet reach the worker as the local isolated writer shows them:
// the first two as gitlinks, checked out as empty directories (git's
// uninitialised submodule), the third left out. A second call on the
// same snapshot (the overlay's stat check) takes the cached checkout; a
// file planted in a gitlink's directory of that checkout is refused. The
// child's change lands.
func TestNestedRepositories(t *testing.T) { copyModes(t, testNestedRepositories) }

func testNestedRepositories(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	sub := filepath.Join(filepath.Dir(h.repo), "subrepo")
	os.MkdirAll(sub, 0o755)
	git(t, sub, "init", "-q", "-b", "main")
	write(t, filepath.Join(sub, "s.txt"), "in the submodule\n")
	git(t, sub, "add", "-A")
	git(t, sub, "commit", "-qm", "s")
	git(t, h.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sm")
	git(t, h.repo, "commit", "-qm", "submodule")
	git(t, h.repo, "push", "-q", "origin", "main")
	nested := filepath.Join(h.repo, "nested")
	os.MkdirAll(nested, 0o755)
	git(t, nested, "init", "-q", "-b", "main")
	write(t, filepath.Join(nested, "n.txt"), "nested\n")
	git(t, nested, "add", "-A")
	git(t, nested, "commit", "-qm", "n")
	git(t, h.repo, "init", "-q", "empty")
	write(t, filepath.Join(h.repo, "empty", "e.txt"), "in a repository with no commit\n")
	write(t, filepath.Join(h.repo, "a.txt"), "dirty\n")

	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	ls := git(t, h.repo, "ls-tree", snap.Tree)
	for _, want := range []string{"160000 commit", "\tsm\n", "\tnested\n"} {
		if !strings.Contains(ls, want) {
			t.Fatalf("the snapshot's tree lacks %q:\n%s", want, ls)
		}
	}
	if strings.Contains(ls, "\tempty\n") {
		t.Fatalf("a repository with no commit is in the snapshot:\n%s", ls)
	}
	want := withoutIgnored(tree(t, h.repo), "sm", "nested", "empty")
	for i, id := range []string{"one", "two"} {
		co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: id})
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		defer co.Cleanup()
		sameTree(t, want, copyTree(t, co))
		out := inCopy(t, co, viewOp{Sh: "ls -a sm nested; test ! -e empty && echo no-empty"}).Out
		if out != "nested:\n.\n..\n\nsm:\n.\n..\nno-empty\n" {
			t.Fatalf("copy %d: the child sees\n%s\nwant sm/ and nested/ empty, no empty/", i, out)
		}
		if i == 0 {
			co.Cleanup()
			continue
		}
		writeIn(t, co, map[string]string{"top.txt": "top\n"})
		res, err := co.Result(ctx, h.store)
		if err != nil {
			t.Fatal(err)
		}
		applied, err := codesnap.Apply(ctx, h.store, h.repo, "", snap, res)
		if err != nil || !applied.Applied {
			t.Fatalf("apply: %v %v", err, applied)
		}
		if got := read(t, filepath.Join(h.repo, "top.txt")); got != "top\n" {
			t.Fatalf("top.txt after apply: %q", got)
		}
		if co.Mount == nil {
			continue
		}
		// A file planted in the cached checkout's empty submodule
		// directory: the next copy refuses that checkout (made again).
		co.Cleanup()
		write(t, filepath.Join(co.Root, "sm", "planted.txt"), "planted\n")
		again, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "three"})
		if err != nil {
			t.Fatal(err)
		}
		defer again.Cleanup()
		if got := copyTree(t, again)["sm/planted.txt"]; got != "" {
			t.Fatalf("a file planted in the cached submodule directory reached the child: %q", got)
		}
	}
}
