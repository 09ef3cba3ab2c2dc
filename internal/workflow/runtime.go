package workflow

import (
	"context"
	"sync"
)

// Runtime is what a plan's concurrency runs on. The default is this
// process's goroutines; a durable engine gives its own (the Temporal engine
// runs a plan inside a Temporal workflow, whose code may not start
// goroutines or block on channels of its own, so every blocking point of the
// executor goes through here). A Runtime's contexts are the ones its Go
// hands out: a function must block only with the context it was given.
type Runtime interface {
	// Go runs f beside the caller, with the context f must use.
	Go(ctx context.Context, f func(ctx context.Context))
	// NewGroup is a counter to wait for (one waiter at a time).
	NewGroup(ctx context.Context) Group
	// NewLatch is a one-shot signal any number may wait for.
	NewLatch(ctx context.Context) Latch
	// NewSemaphore bounds how many hold it at once (n > 0).
	NewSemaphore(ctx context.Context, n int) Semaphore
}

// Group counts running functions (as sync.WaitGroup).
type Group interface {
	Add(n int)
	Done()
	Wait(ctx context.Context)
}

// Latch opens once; Wait returns once it is open.
type Latch interface {
	Open()
	Wait(ctx context.Context)
}

// Semaphore is a bounded count; Acquire reports false when ctx ended first.
type Semaphore interface {
	Acquire(ctx context.Context) bool
	Release()
}

// goroutines is the default Runtime.
type goroutines struct{}

func (goroutines) Go(ctx context.Context, f func(context.Context)) { go f(ctx) }

func (goroutines) NewGroup(context.Context) Group { return &wg{} }

func (goroutines) NewLatch(context.Context) Latch { return &latch{ch: make(chan struct{})} }

func (goroutines) NewSemaphore(_ context.Context, n int) Semaphore {
	return chanSem(make(chan struct{}, n))
}

type wg struct{ sync.WaitGroup }

func (w *wg) Wait(context.Context) { w.WaitGroup.Wait() }

type latch struct {
	once sync.Once
	ch   chan struct{}
}

func (l *latch) Open()                { l.once.Do(func() { close(l.ch) }) }
func (l *latch) Wait(context.Context) { <-l.ch }

type chanSem chan struct{}

func (s chanSem) Acquire(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s chanSem) Release() { <-s }
