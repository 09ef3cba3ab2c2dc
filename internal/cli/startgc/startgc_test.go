package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// afterInit is the GC percentage the tests found (read once, before any
// test changed it: -count=N reruns them in one process).
var afterInit int

func TestMain(m *testing.M) {
	afterInit = debug.SetGCPercent(-1)
	os.Exit(m.Run())
}

// TestHeldThenRestored: after the initialisers the collector is off (this
// package's init ran before the test); Restore sets the first goal, and
// Go's default is back once a collection has run.
func TestHeldThenRestored(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: startgc leaves the user's choice alone (TestLeavesGOGC)")
	}
	if afterInit != -1 {
		t.Fatalf("GC percent after init = %d, want -1 (held off)", afterInit)
	}
	done := Restore()
	runtime.GC()
	select {
	case <-done:
	case <-time.After(time.Minute): // a deadline, not a wait
		t.Fatal("the default never came back after a collection")
	}
	if prev := debug.SetGCPercent(100); prev != 100 {
		t.Fatalf("GC percent after the first collection = %d, want 100", prev)
	}
}

// TestLeavesGOGC: with GOGC set, Restore does not touch the percentage.
func TestLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "250")
	old := debug.SetGCPercent(250)
	defer debug.SetGCPercent(old)
	<-Restore()
	if prev := debug.SetGCPercent(old); prev != 250 {
		t.Fatalf("GC percent after Restore with GOGC=250 = %d, want 250", prev)
	}
}
