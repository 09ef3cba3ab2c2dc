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
		c.put(k(i), &Submission{Workflow: fmt.Sprint(i)}, 1)
		c.put(k(i), &Submission{Workflow: "again"}, 1)
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

// TestVerifiedCacheIsBoundedByBytes: the payload bytes behind the kept
// submissions stay under verifiedCacheBytes, the oldest going first; one
// larger than the bound alone is not kept.
func TestVerifiedCacheIsBoundedByBytes(t *testing.T) {
	var c verifiedCache
	k := func(i int) verifiedKey { return verifiedKey{sum: fmt.Sprint(i), key: "k", sig: "s"} }
	quarter := verifiedCacheBytes / 4
	for i := range 6 {
		c.put(k(i), &Submission{Workflow: fmt.Sprint(i)}, quarter)
		if c.bytes > verifiedCacheBytes {
			t.Fatalf("after %d puts, %d bytes kept, over %d", i+1, c.bytes, verifiedCacheBytes)
		}
	}
	for i, kept := range []bool{false, false, true, true, true, true} {
		if _, ok := c.get(k(i)); ok != kept {
			t.Errorf("entry %d kept %v, want %v", i, ok, kept)
		}
	}
	c.put(k(99), &Submission{}, verifiedCacheBytes+1)
	if _, ok := c.get(k(99)); ok || c.size() != 4 {
		t.Errorf("a payload over the bound was kept (%v) or dropped others (%d left)", ok, c.size())
	}
}
