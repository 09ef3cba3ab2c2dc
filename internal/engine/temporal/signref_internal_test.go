package temporal

import (
	"fmt"
	"testing"
)

// TestVerifiedCacheIsBounded: a worker keeps at most verifiedCacheSize
// verified submissions, the oldest going first; one kept again is not
// kept twice.
func TestVerifiedCacheIsBounded(t *testing.T) {
	var c verifiedCache
	k := func(i int) verifiedKey { return verifiedKey{sum: fmt.Sprint(i), key: "k", sig: "s"} }
	const n = verifiedCacheSize + 44
	for i := range n {
		c.put(k(i), &Submission{Workflow: fmt.Sprint(i)})
		c.put(k(i), &Submission{Workflow: "again"})
	}
	if c.size() != verifiedCacheSize {
		t.Fatalf("%d kept, want %d", c.size(), verifiedCacheSize)
	}
	for _, tc := range []struct {
		i    int
		kept bool
	}{{0, false}, {43, false}, {44, true}, {n - 1, true}} {
		sub, ok := c.get(k(tc.i))
		if ok != tc.kept || ok && sub.Workflow != fmt.Sprint(tc.i) {
			t.Errorf("entry %d: kept %v (%+v), want kept %v with its first value", tc.i, ok, sub, tc.kept)
		}
	}
}
