package isolate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestIsolatedWriterInOddPath: a tree, and a state directory (where an
// overlay's upper and work layers live), whose paths hold the characters
// overlayfs's options take as separators (',' and ':') and as escape
// ('\'): the writer gets the copy it was given (an overlay where the
// machine has one, not a worktree in its place) and its change lands.
func TestIsolatedWriterInOddPath(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), `a,b:c\d`)
			dir := filepath.Join(base, "repo,x")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			git(t, dir, "init", "-q", "-b", "main")
			write(t, filepath.Join(dir, "a.txt"), "a\n")
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-qm", "init")
			state := filepath.Join(base, "state:1,2", "t1")
			if err := os.MkdirAll(state, 0o755); err != nil {
				t.Fatal(err)
			}
			ws, err := iso.Prepare(context.Background(), Options{Dir: dir, ID: "t1", StateDir: state, ForceWorktree: m.force})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Cleanup(context.Background()) })
			if string(ws.Mode) != m.name {
				t.Fatalf("mode %s, want %s (note %q)", ws.Mode, m.name, ws.Note)
			}
			runIsolated(t, ws, `test "$ENTERED_MODE" = `+m.name+`; echo child >> a.txt; echo new > new.txt`)
			out, err := ws.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(out.Files)
			if !out.Applied || !slices.Equal(out.Files, []string{"a.txt", "new.txt"}) {
				t.Fatalf("outcome %+v, want a.txt and new.txt applied", out)
			}
			if got := read(t, filepath.Join(dir, "a.txt")) + read(t, filepath.Join(dir, "new.txt")); got != "a\nchild\nnew\n" {
				t.Errorf("the tree has %q, want the child's change", got)
			}
		})
	}
}

// TestProbeInOddPath: the overlay probe made in a directory whose path
// holds ',' and ':' finds the overlay the machine has (a worker's probe
// runs in its cache under HOME).
func TestProbeInOddPath(t *testing.T) {
	want := testIsolator(t).Support()
	if !want.Overlay {
		t.Skipf("no overlay here (%s)", want.Why)
	}
	base := filepath.Join(t.TempDir(), `x,y:z\w`)
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	if ok, _, why := probeOverlayIn(context.Background(), base); !ok {
		t.Errorf("the probe under %s found no overlay: %s", base, why)
	}
}
