package temporal

import (
	"context"
	"hash/fnv"
	"math/rand"
	"time"

	"github.com/oklog/ulid/v2"
	"go.temporal.io/sdk/workflow"

	wf "github.com/broodhq/brood/internal/workflow"
)

// wctx carries a workflow context through the plan executor, which speaks
// context.Context. Every blocking point of the executor goes through
// runtime below (never through Done), so the workflow's own coroutines do
// all the waiting and the run replays deterministically.
type wctx struct{ w workflow.Context }

func (c wctx) Deadline() (time.Time, bool) { return c.w.Deadline() }
func (c wctx) Done() <-chan struct{}       { return nil }
func (c wctx) Err() error                  { return c.w.Err() }
func (c wctx) Value(key any) any           { return c.w.Value(key) }

// unwrap is the workflow context inside ctx (the executor only ever hands
// back what runtime gave it).
func unwrap(ctx context.Context) workflow.Context { return ctx.(wctx).w }

// runtime is workflow.Runtime on a Temporal workflow's coroutines.
//
// The SDK's dispatcher runs every live coroutine of a workflow on every
// pass of every workflow task, blocked or not (each re-checks what it
// waits for), so a task costs O(live coroutines). A plan's each over 300
// items, 12 at a time, would keep 288 coroutines waiting for a slot and
// wake them all, several times, to take one call's result and schedule
// the next. With lazy set, a coroutine asked for while a call waits for a
// slot of the plan's semaphore is not started yet: it is queued, and
// started (in order) once no call waits, so at most one waits at a time
// and a task costs O(the plan's concurrency) for an each and independent
// tasks (coroutines waiting on a depends_on latch or on an earlier phase
// are not waiting for a slot, so they are started and wait there: up to
// one per such task). Deadlock-free: a slot's
// holder waits only for its own activity, never for a queued coroutine,
// and when nothing waits for a slot the queue moves on.
type runtime struct {
	lazy *starter // nil: every coroutine starts at once
}

var _ wf.Runtime = runtime{}

// starter holds the coroutines not started yet.
type starter struct {
	gated    bool // a semaphore exists: starts are held while one waits
	waiting  int  // coroutines in a semaphore's Acquire
	launched bool // one was started and has not run yet
	pending  []func()
}

// newStarter is a lazy runtime's starter: its own coroutine starts what
// was queued, on a context no cancel reaches (a cancelled run's queued
// calls must still run, to end as cancelled).
func newStarter(w workflow.Context) *starter {
	st := &starter{}
	dc, _ := workflow.NewDisconnectedContext(w)
	workflow.Go(dc, func(w workflow.Context) {
		for {
			_ = workflow.Await(w, st.ready)
			st.start()
		}
	})
	return st
}

func (st *starter) ready() bool {
	return len(st.pending) > 0 && !st.launched && (!st.gated || st.waiting == 0)
}

func (st *starter) start() {
	f := st.pending[0]
	st.pending = st.pending[1:]
	st.launched = true
	f()
}

func (r runtime) Go(ctx context.Context, f func(context.Context)) {
	w := unwrap(ctx)
	run := func() {
		workflow.Go(w, func(w workflow.Context) {
			if r.lazy != nil {
				r.lazy.launched = false
			}
			f(wctx{w})
		})
	}
	if r.lazy == nil || !r.lazy.gated {
		run()
		return
	}
	r.lazy.pending = append(r.lazy.pending, run)
	if r.lazy.ready() {
		r.lazy.start()
	}
}

func (runtime) NewGroup(ctx context.Context) wf.Group {
	return &group{wg: workflow.NewWaitGroup(unwrap(ctx))}
}

func (runtime) NewLatch(ctx context.Context) wf.Latch {
	f, s := workflow.NewFuture(unwrap(ctx))
	return &latch{f: f, s: s}
}

func (r runtime) NewSemaphore(ctx context.Context, n int) wf.Semaphore {
	if r.lazy != nil {
		r.lazy.gated = true
	}
	return sem{s: workflow.NewSemaphore(unwrap(ctx), int64(n)), st: r.lazy}
}

type group struct{ wg workflow.WaitGroup }

func (g *group) Add(n int)                { g.wg.Add(n) }
func (g *group) Done()                    { g.wg.Done() }
func (g *group) Wait(ctx context.Context) { g.wg.Wait(unwrap(ctx)) }

type latch struct {
	f    workflow.Future
	s    workflow.Settable
	open bool
}

func (l *latch) Open() {
	if !l.open {
		l.open = true
		l.s.Set(nil, nil)
	}
}

func (l *latch) Wait(ctx context.Context) { _ = l.f.Get(unwrap(ctx), nil) }

type sem struct {
	s  workflow.Semaphore
	st *starter // counts the waiters (nil: not lazy)
}

func (s sem) Acquire(ctx context.Context) bool {
	w := unwrap(ctx)
	if w.Err() != nil {
		return false
	}
	if s.st != nil {
		s.st.waiting++
		defer func() { s.st.waiting-- }()
	}
	return s.s.Acquire(w, 1) == nil
}

func (s sem) Release() { s.s.Release(1) }

// taskIDs names a run's new tasks deterministically, so a replay names
// them again exactly as the first run did: ULIDs whose time is the
// workflow's clock and whose entropy names the run (PlanTaskID: what
// every worker checks a plan call's task against). Runs started before
// that replay as they ran, their entropy seeded by the execution (and
// their calls are refused by today's workers).
func taskIDs(w workflow.Context) func() string {
	info := workflow.GetInfo(w)
	if workflow.GetVersion(w, boundTaskIDsVersion, workflow.DefaultVersion, 1) >= 1 {
		var n uint32
		return func() string {
			id := PlanTaskID(info.WorkflowExecution.ID, workflow.Now(w), n)
			n++
			return id
		}
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID))
	rng := rand.New(rand.NewSource(int64(h.Sum64())))
	return func() string { return ulid.MustNew(ulid.Timestamp(workflow.Now(w)), rng).String() }
}

// boundTaskIDsVersion marks the runs whose task ids name their run
// (PlanTaskID).
const boundTaskIDsVersion = "brood.plan.bound-task-ids"
