package startgc

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestHeldThenRestored: after the initialisers the collector is off (this
// package's init ran before the test), and Restore puts Go's default back.
func TestHeldThenRestored(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: startgc leaves the user's choice alone (checked by TestLeavesGOGC)")
	}
	if prev := debug.SetGCPercent(-1); prev != -1 {
		t.Fatalf("GC percent after init = %d, want -1 (held off)", prev)
	}
	Restore()
	if prev := debug.SetGCPercent(100); prev != 100 {
		t.Fatalf("GC percent after Restore = %d, want 100", prev)
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
