package temporal

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/blobstore"
)

// TestCaptureMakesTheRecordsIgnored: a checkout used only with the fleet
// had no .brood/.gitignore (the local engine makes it): after its first
// run `git status` showed brood's records as untracked. The submitter
// makes it, with fleet/ (its kept patches), before it captures the tree.
func TestCaptureMakesTheRecordsIgnored(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	root := t.TempDir()
	repo, storeDir := filepath.Join(root, "repo"), filepath.Join(root, "store")
	os.MkdirAll(repo, 0o755)
	os.MkdirAll(storeDir, 0o755)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
		c := exec.Command("git", append([]string{"-c", "user.name=u", "-c", "user.email=u@u"}, args...)...)
		c.Dir = repo
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	store, err := blobstore.Open(t.Context(), "file://"+storeDir)
	if err != nil {
		t.Fatal(err)
	}
	e := New(Config{Code: &CodeConfig{Blobs: store, Dir: repo}, ProjectRoot: repo})
	if _, err := e.capture(t.Context()); err != nil {
		t.Fatal(err)
	}
	ign, err := os.ReadFile(filepath.Join(repo, ".brood", ".gitignore"))
	if err != nil || !strings.Contains(string(ign), "\nfleet/\n") || !strings.Contains(string(ign), "\nworkflows/\n") {
		t.Fatalf(".brood/.gitignore after the submitter's capture: %q, %v", ign, err)
	}
}
