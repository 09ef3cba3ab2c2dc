package temporal

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKeptChangesSweptNotEveryCall: the kept changes (one a call, kept
// for keptFor) are swept at a worker's first call and then at most every
// sweepEvery, not read whole by every call; a record past keptFor is
// still removed by the next sweep, a fresh one never.
func TestKeptChangesSweptNotEveryCall(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	record := func(name string, age time.Duration) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		at := start.Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	there := func(p string) bool { _, err := os.Stat(p); return err == nil }
	a := &Activities{}
	fresh := record("fresh.json", time.Minute)
	for _, tc := range []struct {
		name  string
		at    time.Duration // since start
		swept bool
	}{
		{"the worker's first call", 0, true},
		{"a call a second later", time.Second, false},
		{"a call just within sweepEvery", sweepEvery - time.Second, false},
		{"a call past sweepEvery", sweepEvery + time.Second, true},
		{"the call after it", sweepEvery + 2*time.Second, false},
	} {
		stale := record("stale.json", keptFor+time.Hour)
		a.sweepChanges(dir, start.Add(tc.at))
		if gone := !there(stale); gone != tc.swept {
			t.Errorf("%s: a record past keptFor removed = %v, want %v", tc.name, gone, tc.swept)
		}
		if !there(fresh) {
			t.Fatalf("%s: a fresh record was removed", tc.name)
		}
	}
}
