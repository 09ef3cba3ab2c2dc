package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBaseLayerListsNothing: the base domain a parent puts a child's
// starting thread in (BaseForChild: the scope and the TCP ban, no
// file-system rule) does not split the policy's host temporary
// directories around what the child keeps: that split lists them and
// makes a path for each entry (the child makes it again when it adds its
// file-system layer), once per child in the parent. Counted in
// allocations: one directory of 500 entries split would be thousands.
func TestBaseLayerListsNothing(t *testing.T) {
	abi := landlockABI()
	if abi < 6 {
		t.Skipf("Landlock ABI %d: no scope to build a base layer of", abi)
	}
	tmp := t.TempDir()
	for i := range 500 {
		if err := os.Mkdir(filepath.Join(tmp, fmt.Sprint("d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{ReadOnly: true, Network: true, HiddenAround: []string{tmp}, Keep: []string{filepath.Join(tmp, "d0")}}
	if n := len(p.HiddenPaths()); n != 499 {
		t.Fatalf("the split holds %d paths, want 499", n)
	}
	for _, tc := range []struct {
		name      string
		l         layer
		maxAllocs float64
	}{
		{"base: scope", layer{scope: true}, 10},
		{"base: scope and TCP ban", layer{scope: true, net: true}, 10},
	} {
		allocs := testing.AllocsPerRun(5, func() {
			rfd, err := buildRuleset(p, abi, tc.l)
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(rfd)
		})
		if allocs > tc.maxAllocs {
			t.Errorf("%s: %.0f allocations building the ruleset, want at most %.0f: it split the hidden directories", tc.name, allocs, tc.maxAllocs)
		}
	}
}
