package fleetlink

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/sandbox"
)

// TestWorkerStoreHiddenFromChildren (review C10): a worker's child, in a
// real confined process, reads neither the worker's file:// store (here
// in the home, which a child otherwise reads) nor a trusted-key file
// named by path; it still reads its own tree.
func TestWorkerStoreHiddenFromChildren(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel: nothing hides a path (brood doctor says so)")
	}
	home, proj := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	store := filepath.Join(home, "brood-store")
	object := filepath.Join(store, "sha256", "ab", "abcd")
	keys := filepath.Join(home, "keys", "trusted")
	for _, f := range []string{object, keys, filepath.Join(proj, "a.go")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	own := filepath.Join(dispatch.Root(proj), "01OWN")
	if err := os.MkdirAll(own, 0o700); err != nil {
		t.Fatal(err)
	}
	env := dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj}
	hidden := workerHidden("file://"+store, []string{keys, "AAAAC3NzaC1lZDI1NTE5AAAAIB"})
	p, _ := isolate.ChildPolicy(&env, own, isolate.NewPolicyBase(hidden))
	for path, want := range map[string]bool{object: false, keys: false, filepath.Join(proj, "a.go"): true} {
		if got := catAs(t, p, path); got != want {
			t.Errorf("a worker's child reads %s: %v, want %v", path, got, want)
		}
	}
}

// catAs runs `cat path` in a real process confined by p and reports
// whether it read it.
func catAs(t *testing.T, p sandbox.Policy, path string) bool {
	t.Helper()
	done := make(chan error, 2)
	sandbox.OnThrowawayThread(func() {
		runtime.LockOSThread()
		if _, _, _, err := sandbox.RestrictForChild(p); err != nil {
			done <- err
			return
		}
		done <- nil
		done <- exec.Command("cat", path).Run()
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return <-done == nil
}
