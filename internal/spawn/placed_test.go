package spawn_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/spawn"
)

// placedProbeEnv makes this test binary, re-run under a marked argv[0],
// print the depth spawn.New settles on (TestPlacedDepth).
const placedProbeEnv = "BROOD_TEST_PLACED_PROBE"

// TestPlacedDepth: New reads this process's place in the tree from /proc
// (a marker in its ancestry beats the depth it was told), unless the
// caller says Depth and MaxDepth already are that decision (Placed: a
// root's Factory.Depth), when it takes them as they are and reads nothing;
// a dispatcher In a workspace keeps its parent's decision.
func TestPlacedDepth(t *testing.T) {
	if v := os.Getenv(placedProbeEnv); v != "" {
		d, err := spawn.New(spawn.Config{ProjectRoot: t.TempDir(), Depth: 0, MaxDepth: 5, Placed: v == "placed", Exe: "/bin/true"})
		if err != nil {
			t.Fatal(err)
		}
		if v == "in" {
			// A fleet worker's dispatcher for one call's copy: the
			// scanned decision, kept (not scanned again).
			if d, err = d.In(t.TempDir(), "", nil); err != nil {
				t.Fatal(err)
			}
		}
		got, max := d.Depth()
		fmt.Printf("depth=%d max=%d\n", got, max)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := depth.Marker{Task: "01TASK", Depth: 2, Max: 3}.String()
	for _, tc := range []struct {
		name, mode, argv0, want string
	}{
		{"a root, scanned", "scan", exe, "depth=0 max=5"},
		{"below a child, scanned", "scan", marker, "depth=2 max=3"},
		{"below a child, placed by the caller", "placed", marker, "depth=0 max=5"},
		{"below a child, a dispatcher in a workspace", "in", marker, "depth=2 max=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^TestPlacedDepth$", "-test.count=1")
			cmd.Args[0] = tc.argv0
			cmd.Env = append(os.Environ(), placedProbeEnv+"="+tc.mode)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("probe: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want+"\n") {
				t.Fatalf("probe printed %q, want %q", out, tc.want)
			}
		})
	}
}
