package temporal_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// hangingNames is a fleet store whose creates of final answers' names
// (fleet/answers/...) hang, whatever their context says, until released:
// an NFS mount gone away under one store operation.
type hangingNames struct {
	*blobstore.Store
	release chan struct{}
	once    sync.Once
	creates atomic.Int32
}

func (s *hangingNames) Create(ctx context.Context, key string, data []byte) (temporal.Ref, error) {
	if strings.HasPrefix(key, "fleet/answers/") {
		s.creates.Add(1)
		<-s.release
		return temporal.Ref{}, errors.New("store: hung")
	}
	return s.Store.Create(ctx, key, data)
}

func (s *hangingNames) unhang() { s.once.Do(func() { close(s.release) }) }

// TestNamedAnswerWithAHangingStoreCompletesOnce (review44 P2-1): on a
// signed fleet, the final answer's name is created in the store; a store
// that hangs on that create is left behind within half the heartbeat
// timeout, the answer goes by its heartbeat as it did before names, and
// the call completes once: one attempt, its child run once (the model
// asked no more than without the hang). The create held the heartbeats'
// lock and had no bound: the attempt fell silent, the server timed it
// out, and every retry asked the model again.
func TestNamedAnswerWithAHangingStoreCompletesOnce(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	root := t.TempDir()
	blobs, err := blobstore.Open(t.Context(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &hangingNames{Store: blobs, release: make(chan struct{})}
	// Released before the worker stops (cleanups run last first): the
	// hung creates end, and nothing is left waiting on them.
	var runs atomic.Int32
	child := func(ctx context.Context, attempt int, f *fakeChild) *call.Result {
		runs.Add(1)
		f.answer(1) // the model's final answer
		if f.spec.Watch.Final == nil {
			t.Error("the signed worker did not name its final answer in the store")
		} else if !f.spec.Watch.Final(ctx, 1) {
			t.Error("the final answer's boundary was not made durable")
		}
		return result(f, dispatch.StatusDone, "the answer")
	}
	keys := newBenchKeys(t, 1).worker(0).keys
	w := temporal.NewWorker(c, temporal.WorkerOptions{Queue: q, Concurrency: 2, Heartbeat: 200 * time.Millisecond, StopTimeout: 5 * time.Second,
		Activities: &temporal.Activities{ProjectRoot: root, Store: store, Worker: "hang", UploadEvery: 100 * time.Millisecond, Keys: keys,
			Runner: runnerFunc(func(ctx context.Context, s call.Spec) (*call.Result, error) {
				return (&fakeFleet{}).start(ctx, t, root, "", s, child)
			})}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	t.Cleanup(store.unhang)
	ff := &fakeFleet{c: c, eng: newEngine(c, q), queue: q}
	id := dispatch.NewID()
	o := ff.call(t, context.Background(), id)
	if o.err != nil || o.r == nil || o.r.Status != dispatch.StatusDone || o.r.Summary != "the answer" {
		t.Fatalf("call: %+v, %v; want it done with its answer", o.r, o.err)
	}
	if n := store.creates.Load(); n < 1 {
		t.Fatalf("%d creates of the answer's name; want the hanging one", n)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the call's child ran %d times (the model asked as often); want once", n)
	}
	if o.r.Attempts > 1 {
		t.Errorf("the call took %d attempts; want 1", o.r.Attempts)
	}
}
