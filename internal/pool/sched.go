package pool

import (
	"context"
	"slices"
	"sync"
)

// Class says how a child may share the work tree with others.
type Class int

const (
	// ReadOnly children run side by side with each other.
	ReadOnly Class = iota
	// Mutating children share the parent's work tree, so they run one at a
	// time and never beside a read-only child (whose verification would see
	// the writer's changes as its own).
	Mutating
	// Isolated children work on their own copy and run fully in parallel.
	Isolated
)

func (c Class) String() string {
	switch c {
	case ReadOnly:
		return "read-only"
	case Mutating:
		return "mutating"
	default:
		return "isolated"
	}
}

// scheduler hands out process slots by priority (lower runs first, then
// first come first served) while keeping the work-tree rules of Class.
// A grant or a release costs O(1) plus the waiters it starts (and a
// binary search and a copy of pointers to queue one): with every slot
// taken and no tree-only waiter, nothing is scanned, so a fan-out of K
// behind a pool of five stays linear in K.
type scheduler struct {
	mu      sync.Mutex
	slots   int
	running int
	readers int
	writer  bool
	seq     uint64
	waiting []*waiter
	// writers are the waiting Mutating waiters in arrival order (the
	// oldest one holds back later readers), and treeOnly counts the
	// waiters that need no slot.
	writers  []*waiter
	treeOnly int
}

type waiter struct {
	prio  int
	seq   uint64
	class Class
	ready chan struct{}
	// noSlot waiters want only the work tree (to apply a patch), not a
	// process slot.
	noSlot bool
}

func newScheduler(slots int) *scheduler {
	if slots < 1 {
		slots = 1
	}
	return &scheduler{slots: slots}
}

// acquire blocks until the job may start, or ctx ends. The returned func
// releases the slot and must be called exactly once.
func (s *scheduler) acquire(ctx context.Context, prio int, class Class) (func(), error) {
	return s.wait(ctx, &waiter{prio: prio, class: class, ready: make(chan struct{})})
}

// acquireTree takes the work tree exclusively, without a process slot: no
// tree-sharing child runs while the holder writes to the tree.
func (s *scheduler) acquireTree(ctx context.Context) (func(), error) {
	return s.wait(ctx, &waiter{prio: -1, class: Mutating, noSlot: true, ready: make(chan struct{})})
}

func (s *scheduler) wait(ctx context.Context, w *waiter) (func(), error) {
	class := w.class
	s.mu.Lock()
	s.seq++
	w.seq = s.seq
	i, _ := slices.BinarySearchFunc(s.waiting, w, cmpWaiter)
	s.waiting = slices.Insert(s.waiting, i, w)
	if w.class == Mutating {
		s.writers = append(s.writers, w)
	}
	if w.noSlot {
		s.treeOnly++
	}
	s.grantLocked()
	s.mu.Unlock()

	select {
	case <-w.ready:
		return func() { s.release(class, w.noSlot) }, nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-w.ready:
			// Granted while we were giving up: hand the slot back.
			s.releaseLocked(class, w.noSlot)
		default:
			if i, ok := slices.BinarySearchFunc(s.waiting, w, cmpWaiter); ok && s.waiting[i] == w {
				s.dequeueLocked(i)
			}
			// Its leaving may unblock others (e.g. readers it held back).
			s.grantLocked()
		}
		return nil, ctx.Err()
	}
}

func cmpWaiter(a, b *waiter) int {
	if a.prio != b.prio {
		return a.prio - b.prio
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func (s *scheduler) eligible(c Class) bool {
	switch c {
	case ReadOnly:
		return !s.writer
	case Mutating:
		return !s.writer && s.readers == 0
	}
	return true
}

// grantLocked starts every waiting job that may start, best first. A reader
// that arrived after a waiting writer waits for it, whatever its priority,
// or a stream of (high-priority) readers would starve the writer.
func (s *scheduler) grantLocked() {
	oldestWriter := ^uint64(0)
	if len(s.writers) > 0 {
		oldestWriter = s.writers[0].seq
	}
	for i := 0; i < len(s.waiting); {
		w := s.waiting[i]
		if !w.noSlot && s.running >= s.slots {
			if s.treeOnly == 0 {
				return // every slot is taken and no one waits without one
			}
			i++
			continue
		}
		if !s.eligible(w.class) || (w.class == ReadOnly && w.seq > oldestWriter) {
			i++
			continue
		}
		s.dequeueLocked(i)
		if len(s.writers) > 0 {
			oldestWriter = s.writers[0].seq
		} else {
			oldestWriter = ^uint64(0)
		}
		if !w.noSlot {
			s.running++
		}
		switch w.class {
		case ReadOnly:
			s.readers++
		case Mutating:
			s.writer = true
		}
		close(w.ready)
	}
}

// dequeueLocked takes the waiter at i out of the queue.
func (s *scheduler) dequeueLocked(i int) {
	w := s.waiting[i]
	s.waiting = slices.Delete(s.waiting, i, i+1)
	if w.class == Mutating {
		s.writers = slices.DeleteFunc(s.writers, func(x *waiter) bool { return x == w })
	}
	if w.noSlot {
		s.treeOnly--
	}
}

func (s *scheduler) release(c Class, noSlot bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(c, noSlot)
}

func (s *scheduler) releaseLocked(c Class, noSlot bool) {
	if !noSlot {
		s.running--
	}
	switch c {
	case ReadOnly:
		s.readers--
	case Mutating:
		s.writer = false
	}
	s.grantLocked()
}

// stats returns running and waiting counts.
func (s *scheduler) stats() (running, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, len(s.waiting)
}
