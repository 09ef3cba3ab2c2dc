package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInPlaceWriterPlantsNoGitBroodLink is review31's P2-1: in a checkout
// with no .git/brood yet (brood's records: a keyless checkout's sent
// starts, landing records), an in-place writer makes it a link into the
// work tree, so that the records a later fleet call keeps live where
// later children write. The writer's view holds .git/brood (made empty
// first): the link is never made, and .git/brood stays brood's own
// directory.
func TestInPlaceWriterPlantsNoGitBroodLink(t *testing.T) {
	needLandlock(t)
	p := newProject(t, nil)
	git := filepath.Join(p.root, ".git", "brood")
	if _, err := os.Lstat(git); err == nil {
		t.Fatal(".git/brood exists before the run: the test needs a checkout without it")
	}
	out := p.inPlaceBash("plant", "mkdir -p notes/fleet; rm -rf .git/brood; ln -s ../notes .git/brood && echo LINKED; echo tried > tried.txt")
	if strings.Contains(out, "LINKED") {
		t.Errorf("the writer linked .git/brood: %s", out)
	}
	fi, err := os.Lstat(git)
	if err == nil && !fi.IsDir() {
		t.Fatalf(".git/brood after the run: mode %v, want brood's own directory (or none)", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the writer did not run: %v\n%s", err, out)
	}
}
