package isolate

import (
	"slices"
	"testing"
)

// TestOutermostRoots: writeOnly binds each writable root once, the outer
// one of two nested roots (its recursive bind holds the inner), shallower
// first, and never a relative path.
func TestOutermostRoots(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"none", nil, nil},
		{"nested", []string{"/p/.brood/dispatch/t", "/p", "/home/u/.cache/brood/go/p"}, []string{"/p", "/home/u/.cache/brood/go/p"}},
		{"twice and unclean", []string{"/a/b/", "/a/b", "rel", "/a/bc"}, []string{"/a/b", "/a/bc"}},
		{"root holds all", []string{"/x", "/"}, []string{"/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := outermost(c.in); !slices.Equal(got, c.want) {
				t.Errorf("outermost(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
