package pool

import (
	"sync"
	"time"
)

// breacher is what the limits watch reads of one child: the limit it has
// hit since it started ("" = none). A *hold is one.
type breacher interface{ breach() string }

// limitWatch is a pool's one limits ticker: every limitPoll, while any
// child held by a cgroup's counters runs, it reads each one's counters and
// tells that child's watch of a breach. One wake-up of the parent per
// tick for all its children instead of one per child: a wake-up costs
// more than the two counter files it reads (about 40 µs against 14 µs
// here), and it is paid every 100 ms of every child's life.
type limitWatch struct {
	every time.Duration // limitPoll when zero

	mu   sync.Mutex
	subs map[breacher]chan string
	stop chan struct{} // closes the ticking goroutine; nil when none runs
	done chan struct{} // closed when it has returned
}

// add starts watching b: the returned channel gets the limit it hit (once;
// b is no longer read after that), and remove stops watching it, and the
// ticker with its last child (it returns once the ticker has stopped).
func (w *limitWatch) add(b breacher) (<-chan string, func()) {
	ch := make(chan string, 1)
	w.mu.Lock()
	if w.subs == nil {
		w.subs = map[breacher]chan string{}
	}
	w.subs[b] = ch
	if w.stop == nil {
		w.stop, w.done = make(chan struct{}), make(chan struct{})
		go w.tick(w.stop, w.done)
	}
	w.mu.Unlock()
	return ch, func() { w.remove(b) }
}

func (w *limitWatch) remove(b breacher) {
	w.mu.Lock()
	delete(w.subs, b)
	var done chan struct{}
	if len(w.subs) == 0 && w.stop != nil {
		close(w.stop)
		done = w.done
		w.stop, w.done = nil, nil
	}
	w.mu.Unlock()
	if done != nil {
		<-done
	}
}

// tick reads every watched child's counters each period until stop.
func (w *limitWatch) tick(stop, done chan struct{}) {
	defer close(done)
	every := w.every
	if every <= 0 {
		every = limitPoll
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var subs []breacher
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		subs = subs[:0]
		w.mu.Lock()
		for b := range w.subs {
			subs = append(subs, b)
		}
		w.mu.Unlock()
		for _, b := range subs {
			why := b.breach()
			if why == "" {
				continue
			}
			w.mu.Lock()
			if ch, ok := w.subs[b]; ok {
				ch <- why // buffered, and sent once: the child leaves the set
				delete(w.subs, b)
			}
			w.mu.Unlock()
		}
	}
}
