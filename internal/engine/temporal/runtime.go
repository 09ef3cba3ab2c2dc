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
type runtime struct{}

var _ wf.Runtime = runtime{}

func (runtime) Go(ctx context.Context, f func(context.Context)) {
	workflow.Go(unwrap(ctx), func(w workflow.Context) { f(wctx{w}) })
}

func (runtime) NewGroup(ctx context.Context) wf.Group {
	return &group{wg: workflow.NewWaitGroup(unwrap(ctx))}
}

func (runtime) NewLatch(ctx context.Context) wf.Latch {
	f, s := workflow.NewFuture(unwrap(ctx))
	return &latch{f: f, s: s}
}

func (runtime) NewSemaphore(ctx context.Context, n int) wf.Semaphore {
	return sem{workflow.NewSemaphore(unwrap(ctx), int64(n))}
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

type sem struct{ s workflow.Semaphore }

func (s sem) Acquire(ctx context.Context) bool {
	w := unwrap(ctx)
	return w.Err() == nil && s.s.Acquire(w, 1) == nil
}

func (s sem) Release() { s.s.Release(1) }

// taskIDs names a run's new tasks deterministically: ULIDs whose time is
// the workflow's clock and whose entropy is seeded by the execution, so a
// replay names them again exactly as the first run did.
func taskIDs(w workflow.Context) func() string {
	info := workflow.GetInfo(w)
	h := fnv.New64a()
	_, _ = h.Write([]byte(info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID))
	rng := rand.New(rand.NewSource(int64(h.Sum64())))
	return func() string { return ulid.MustNew(ulid.Timestamp(workflow.Now(w)), rng).String() }
}
