package isolate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestKnownLayerRebuiltWhenAWayChanges: the known-projects layer holds a
// rule per entry of each directory on the way to a hidden path, so an
// entry made there since (a new project beside a known one, a file in the
// home written by a rename) has no rule and would be unreadable to every
// child until the layer is built again: it is, at the next spawn, and not
// before anything changed.
func TestKnownLayerRebuiltWhenAWayChanges(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no known-projects layer")
	}
	home := Resolved(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	root := Resolved(t.TempDir())
	other := filepath.Join(home, "src", "other")
	for _, d := range []string{other, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := taskdir.Open(d).EnsureWritable(); err != nil {
			t.Fatal(err)
		}
	}
	base := NewPolicyBase(nil)
	first, _, err := base.KnownLayer(root, nil)
	if err != nil || first == nil {
		t.Fatalf("KnownLayer: %v, %v", first, err)
	}
	if again, _, _ := base.KnownLayer(root, nil); again != first {
		t.Fatal("the layer was built again with nothing changed")
	}
	for _, made := range []string{filepath.Join(home, "src", "new-project"), filepath.Join(home, ".gitconfig"), filepath.Join(other, "NEWS")} {
		before, _, _ := base.KnownLayer(root, nil)
		if err := os.WriteFile(made, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if after, _, _ := base.KnownLayer(root, nil); after == before {
			t.Errorf("%s made on the way to a hidden path: the layer was not built again, so no child could read it", made)
		}
	}
}
