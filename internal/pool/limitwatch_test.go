package pool

import (
	"sync/atomic"
	"testing"
	"time"
)

// fakeBreacher counts its reads on a channel and reports why once set.
type fakeBreacher struct {
	reads chan struct{}
	why   atomic.Value // string
}

func newFake() *fakeBreacher {
	f := &fakeBreacher{reads: make(chan struct{}, 1024)}
	f.why.Store("")
	return f
}

func (f *fakeBreacher) breach() string {
	select { // never blocks the ticker: a loaded machine may outrun the test's reads
	case f.reads <- struct{}{}:
	default:
	}
	return f.why.Load().(string)
}

// waitReads waits for n more reads of f.
func waitReads(t *testing.T, f *fakeBreacher, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.reads:
		case <-time.After(10 * time.Second):
			t.Fatal("the watch stopped reading a child it watches")
		}
	}
}

// TestOneLimitWatchForEveryChild: one ticker reads every watched child's
// counters, tells a breach to that child alone and once, reads it no
// more after it, and stops with its last child.
func TestOneLimitWatchForEveryChild(t *testing.T) {
	w := &limitWatch{every: time.Millisecond}
	fakes := []*fakeBreacher{newFake(), newFake(), newFake()}
	var chans []<-chan string
	var stops []func()
	for _, f := range fakes {
		ch, stop := w.add(f)
		chans, stops = append(chans, ch), append(stops, stop)
	}
	for _, f := range fakes {
		waitReads(t, f, 2)
	}
	fakes[1].why.Store("memory limit of 1 MiB")
	select {
	case why := <-chans[1]:
		if why != "memory limit of 1 MiB" {
			t.Fatalf("told %q", why)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a breach was never told")
	}
	// Two more rounds: the others are still read and told nothing; the
	// one that breached is read no more (at most the read in flight).
	for _, i := range []int{0, 2} {
		waitReads(t, fakes[i], 2)
	}
	for _, i := range []int{0, 2} {
		select {
		case why := <-chans[i]:
			t.Fatalf("child %d told %q", i, why)
		default:
		}
	}
	for len(fakes[1].reads) > 0 {
		<-fakes[1].reads
	}
	waitReads(t, fakes[0], 2)
	if n := len(fakes[1].reads); n > 0 {
		t.Fatalf("the breached child was read %d more times", n)
	}
	for _, stop := range stops {
		stop()
	}
	w.mu.Lock()
	running := w.stop != nil
	w.mu.Unlock()
	if running {
		t.Fatal("the ticker still runs with no child to watch")
	}
	// A new child starts it again.
	f := newFake()
	_, stop := w.add(f)
	waitReads(t, f, 1)
	stop()
}
