package pool

import (
	"context"
	"testing"
)

// TestSchedulerOrder: with one slot taken, queued jobs start by priority,
// then in arrival order.
func TestSchedulerOrder(t *testing.T) {
	s := newScheduler(1)
	release, err := s.acquire(context.Background(), 0, Isolated)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 4)
	prios := []int{9, 5, 0, 5}
	queued := make(chan struct{}, len(prios))
	for i, p := range prios {
		go func() {
			queued <- struct{}{}
			r, err := s.acquire(context.Background(), p, Isolated)
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			r()
		}()
		<-queued
		waitFor(t, func() bool { _, w := s.stats(); return w == i+1 })
	}
	release()
	var got []int
	for range prios {
		got = append(got, <-order)
	}
	want := []int{2, 1, 3, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("start order %v, want %v", got, want)
		}
	}
}

// TestSchedulerClasses: readers share, a writer excludes everyone sharing
// the tree, isolated jobs ignore both.
func TestSchedulerClasses(t *testing.T) {
	s := newScheduler(10)
	ctx := context.Background()
	r1, _ := s.acquire(ctx, 0, ReadOnly)
	r2, _ := s.acquire(ctx, 0, ReadOnly)
	iso, _ := s.acquire(ctx, 0, Isolated)
	got := make(chan func(), 1)
	go func() {
		w, _ := s.acquire(ctx, 0, Mutating)
		got <- w
	}()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	r1()
	select {
	case <-got:
		t.Fatal("writer started beside a reader")
	default:
	}
	r2()
	w := <-got
	// A reader now waits for the writer; an isolated job does not.
	rc := make(chan func(), 1)
	go func() { r, _ := s.acquire(ctx, 0, ReadOnly); rc <- r }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	iso2, _ := s.acquire(ctx, 0, Isolated)
	w()
	(<-rc)()
	iso()
	iso2()
	if r, w := s.stats(); r != 0 || w != 0 {
		t.Fatalf("leaked slots: running %d waiting %d", r, w)
	}
}

func TestSchedulerCancelWhileQueued(t *testing.T) {
	s := newScheduler(1)
	r, _ := s.acquire(context.Background(), 0, Isolated)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := s.acquire(ctx, 0, Isolated); errc <- err }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("queued acquire survived cancel")
	}
	r()
	if run, w := s.stats(); run != 0 || w != 0 {
		t.Fatalf("running %d waiting %d after cancel", run, w)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 1e7; i++ {
		if cond() {
			return
		}
		runtimeGosched()
	}
	t.Fatal("condition never held")
}

// TestWriterIsNotStarvedByReaders: once a writer waits, readers that come
// after it wait too, so the writer runs as soon as the current readers end.
func TestWriterIsNotStarvedByReaders(t *testing.T) {
	s := newScheduler(10)
	ctx := context.Background()
	r1, _ := s.acquire(ctx, 5, ReadOnly)
	wc := make(chan func(), 1)
	go func() { w, _ := s.acquire(ctx, 5, Mutating); wc <- w }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	rc := make(chan func(), 1)
	go func() { r, _ := s.acquire(ctx, 5, ReadOnly); rc <- r }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 2 })
	select {
	case <-rc:
		t.Fatal("a reader overtook a waiting writer")
	default:
	}
	r1()
	w := <-wc
	w()
	(<-rc)()
}

// TestLockTree: the tree lock waits for tree-sharing children and holds new
// ones back, without taking a process slot.
func TestLockTree(t *testing.T) {
	s := newScheduler(1)
	ctx := context.Background()
	r, _ := s.acquire(ctx, 0, ReadOnly)
	lc := make(chan func(), 1)
	go func() { l, _ := s.acquireTree(ctx); lc <- l }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	r()
	unlock := <-lc
	// The slot is free (the lock took none), but a reader must wait.
	got := make(chan func(), 1)
	go func() { r2, _ := s.acquire(ctx, 0, ReadOnly); got <- r2 }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	iso, err := s.acquire(ctx, 0, Isolated)
	if err != nil {
		t.Fatal(err)
	}
	iso()
	unlock()
	(<-got)()
}

// TestWriterNotStarvedByHigherPriorityReaders: explore-like readers have a
// better priority than writers, yet one arriving after a waiting writer
// still waits for it.
func TestWriterNotStarvedByHigherPriorityReaders(t *testing.T) {
	s := newScheduler(10)
	ctx := context.Background()
	r1, _ := s.acquire(ctx, 0, ReadOnly)
	wc := make(chan func(), 1)
	go func() { w, _ := s.acquire(ctx, 5, Mutating); wc <- w }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	rc := make(chan func(), 1)
	go func() { r, _ := s.acquire(ctx, 0, ReadOnly); rc <- r }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 2 })
	r1()
	w := <-wc
	select {
	case <-rc:
		t.Fatal("a later high-priority reader ran beside the writer")
	default:
	}
	w()
	(<-rc)()
}

// TestCancelledWriterReleasesReaders: a writer that gives up while waiting
// lets the readers it held back start at once.
func TestCancelledWriterReleasesReaders(t *testing.T) {
	s := newScheduler(10)
	r1, _ := s.acquire(context.Background(), 0, ReadOnly)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.acquire(ctx, 5, Mutating); close(done) }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 1 })
	rc := make(chan func(), 1)
	go func() { r, _ := s.acquire(context.Background(), 5, ReadOnly); rc <- r }()
	waitFor(t, func() bool { _, w := s.stats(); return w == 2 })
	cancel()
	<-done
	(<-rc)()
	r1()
}
