package codesnap

import (
	"context"
	"sync"
)

// rounds shares a verified checkout's stat check (statcheck.go) among the
// calls of this worker process that ask for it together, as a run's calls
// do, and still checks after each call asks: a call that asks while a
// check runs (which may have passed a file before the call asked) waits
// for the next round, which starts when that one ends and serves every
// call that asked meanwhile. So with four slots, four calls arriving
// together cost two checks, not four, and none is answered by a check
// that began before it asked.
type rounds struct {
	mu   sync.Mutex
	cur  *round // the round running, or the last one (finished)
	next *round // the round the calls that asked during cur wait for
	// onJoin, when set (tests), is called as a call joins next.
	onJoin func()
}

// round is one stat check; ok is its answer, set before done is closed
// (false if the check panicked).
type round struct {
	done     chan struct{}
	finished bool // under rounds.mu
	ok       bool
}

// run returns the answer of a check that began after run was called:
// its own, or the next round's.
func (r *rounds) run(ctx context.Context, check func() bool) (bool, error) {
	r.mu.Lock()
	for {
		if r.cur == nil || r.cur.finished {
			mine := r.next
			if mine == nil {
				mine = &round{done: make(chan struct{})}
			}
			r.cur, r.next = mine, nil
			r.mu.Unlock()
			// Finished and closed however check returns (a panic too: the
			// calls waiting on it, and every later one, would wait forever).
			defer func() {
				r.mu.Lock()
				mine.finished = true
				r.mu.Unlock()
				close(mine.done)
			}()
			mine.ok = check()
			return mine.ok, nil
		}
		if r.next == nil {
			r.next = &round{done: make(chan struct{})}
		}
		cur, mine := r.cur, r.next
		if r.onJoin != nil {
			r.onJoin()
		}
		r.mu.Unlock()
		select {
		case <-cur.done:
		case <-ctx.Done():
			return false, ctx.Err()
		}
		r.mu.Lock()
		if r.cur == cur {
			continue // nobody has started mine yet: this call does
		}
		// Another call started mine (only r.next is ever started).
		r.mu.Unlock()
		select {
		case <-mine.done:
			return mine.ok, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}
