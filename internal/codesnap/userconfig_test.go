package codesnap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestWorkerGitRunsNoUserFilter: a submission whose .gitattributes names
// a filter the worker's user installed globally (git-lfs, git-crypt,
// nbstripout; here one that leaves a mark) does not run it on the
// worker: not when its copy is checked out (smudge), not when the
// child's change is taken (clean). The worker's git reads no global or
// system configuration on submitted content (red team 4, P3-2), as its
// verification and chains already did.
func TestWorkerGitRunsNoUserFilter(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	write(t, filepath.Join(h.repo, ".gitattributes"), "*.txt filter=evil\n")
	git(t, h.repo, "add", ".gitattributes")
	git(t, h.repo, "commit", "-q", "-m", "attributes")
	git(t, h.repo, "push", "-q", "origin", "main")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	// The worker's user's own configuration, from here on.
	marks := t.TempDir()
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"evil\"]\n\tsmudge = touch "+marks+"/smudged; cat\n\tclean = touch "+marks+"/cleaned; cat\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "task1"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	write(t, filepath.Join(co.Root, "a.txt"), "changed by the child\n")
	res, err := co.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Files, ",") != "a.txt" {
		t.Errorf("the child's change: %v; want a.txt", res.Files)
	}
	for _, m := range []string{"smudged", "cleaned"} {
		if _, err := os.Stat(filepath.Join(marks, m)); err == nil {
			t.Errorf("the worker's global filter ran on the submission (%s)", m)
		}
	}
}
