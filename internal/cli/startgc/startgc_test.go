package startgc

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// afterInit is the GC percentage the tests found (read once, before any
// test changed it: -count=N reruns them in one process).
var afterInit int

func TestMain(m *testing.M) {
	afterInit = debug.SetGCPercent(-1)
	os.Exit(m.Run())
}

// TestHeldThenRestored: after the initialisers the collector is off (this
// package's init ran before the test); Restore puts Go's default back at
// once, and with it the first heap goal of 4 MiB: the root's garbage
// while its children run is collected there, not held up to 8 MiB
// (GOGC=200 before the first collection, as brood did).
func TestHeldThenRestored(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: startgc leaves the user's choice alone (TestLeavesGOGC)")
	}
	if afterInit != -1 {
		t.Fatalf("GC percent after init = %d, want -1 (held off)", afterInit)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	Restore()
	if prev := debug.SetGCPercent(100); prev != 100 {
		t.Fatalf("GC percent after Restore = %d, want 100", prev)
	}
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	if goal := s[0].Value.Uint64(); goal > 5<<20 {
		t.Errorf("heap goal after Restore = %.1f MiB, want Go's first 4 MiB", float64(goal)/(1<<20))
	}
}

// TestLeavesGOGC: with GOGC set, Restore does not touch the percentage.
func TestLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "250")
	old := debug.SetGCPercent(250)
	defer debug.SetGCPercent(old)
	Restore()
	if prev := debug.SetGCPercent(old); prev != 250 {
		t.Fatalf("GC percent after Restore with GOGC=250 = %d, want 250", prev)
	}
}
