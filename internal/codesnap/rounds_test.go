package codesnap

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRoundsCheckAfterEveryCall: calls that ask while a check runs share
// the next one, never the running one (begun before they asked): the
// first check answers false, the second true, and the three calls that
// joined during the first get true; four calls, two checks. A call that
// gives up while waiting does not leave the next caller waiting.
func TestRoundsCheckAfterEveryCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool // the joiners give up before the first check ends
	}{
		{"joiners share the next round", false},
		{"joiners give up", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rounds
			joined := make(chan struct{}, 8)
			r.onJoin = func() { joined <- struct{}{} }
			var checks atomic.Int32
			started, release := make(chan struct{}), make(chan struct{})
			check := func() bool {
				n := checks.Add(1)
				if n == 1 {
					close(started)
					<-release
				}
				return n != 1
			}
			first := make(chan bool)
			go func() {
				ok, err := r.run(t.Context(), check)
				if err != nil {
					t.Error(err)
				}
				first <- ok
			}()
			<-started
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var wg sync.WaitGroup
			got := make([]bool, 3)
			errs := make([]error, 3)
			for i := range got {
				wg.Go(func() { got[i], errs[i] = r.run(ctx, check) })
			}
			for range got {
				<-joined
			}
			if tc.cancel {
				cancel()
				wg.Wait()
			}
			close(release)
			if <-first {
				t.Fatal("the first call got the second round's answer")
			}
			wg.Wait()
			for i := range got {
				switch {
				case tc.cancel && !errors.Is(errs[i], context.Canceled):
					t.Fatalf("joiner %d: err %v, want context.Canceled", i, errs[i])
				case !tc.cancel && (errs[i] != nil || !got[i]):
					t.Fatalf("joiner %d: ok %v err %v: want the round begun after it asked (true)", i, got[i], errs[i])
				}
			}
			if !tc.cancel && checks.Load() != 2 {
				t.Fatalf("%d checks for four calls, want 2", checks.Load())
			}
			// A later call runs a check of its own.
			before := checks.Load()
			if ok, err := r.run(t.Context(), check); err != nil || !ok || checks.Load() != before+1 {
				t.Fatalf("a later call: ok %v err %v, checks %d -> %d", ok, err, before, checks.Load())
			}
		})
	}
}

// TestRoundsAfterAPanic: a check that panics still ends its round, so a
// later call runs a check of its own instead of waiting for that round
// for ever (it would, within the 10 s its context allows here).
func TestRoundsAfterAPanic(t *testing.T) {
	var r rounds
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the check's panic did not reach its caller")
			}
		}()
		r.run(t.Context(), func() bool { panic("check") })
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if ok, err := r.run(ctx, func() bool { return true }); err != nil || !ok {
		t.Fatalf("a later call: ok %v, err %v", ok, err)
	}
}
