package spawn

import (
	"sync/atomic"
	"testing"
)

// TestLayerWarmJoinedAtClose: a dispatcher runs one warm-up of its
// children's layer at a time, waits at Close for the one at work (it
// reads the home and the known projects: a test's directories are
// removed after Close), and starts none after.
func TestLayerWarmJoinedAtClose(t *testing.T) {
	var w layerWarm
	var runs, done atomic.Int32
	release := make(chan struct{})
	w.warm(func() {
		runs.Add(1)
		<-release
		done.Add(1)
	})
	w.warm(func() { runs.Add(1) }) // while the first is at work: not run
	closed := make(chan int32)
	go func() {
		w.close()
		closed <- done.Load()
	}()
	close(release)
	if got := <-closed; got != 1 {
		t.Fatalf("Close returned before the warm-up at work ended (%d done)", got)
	}
	w.warm(func() { runs.Add(1) }) // after Close: not run
	w.close()
	if got := runs.Load(); got != 1 {
		t.Fatalf("%d warm-ups ran, want 1", got)
	}
}
