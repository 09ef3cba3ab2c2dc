package temporal_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/taskdir"
)

// An attempt's durable points against a real dev server, one heartbeat at
// a time: the worker is in-process and its "child" is the test's, which
// writes the task's transcript and calls the call's Watch the way a
// child's pings and turn boundaries do, and asks the server, between two
// of its steps, what the attempt's heartbeat details are.

// faultyStore is a store whose puts fail while the test says so.
type faultyStore struct {
	temporal.Store
	mu      sync.Mutex
	failing int           // puts still to fail (<0: every one)
	hung    chan struct{} // puts block until it is closed (nil: they do not)
	puts    int           // puts asked for, failed or not
}

func (s *faultyStore) PutBytes(ctx context.Context, data []byte) (temporal.Ref, error) {
	s.mu.Lock()
	s.puts++
	fail := s.failing != 0
	if s.failing > 0 {
		s.failing--
	}
	hung := s.hung
	s.mu.Unlock()
	if hung != nil {
		<-hung // whatever ctx says: a store that hangs
		return temporal.Ref{}, errors.New("store: hung")
	}
	if fail {
		return temporal.Ref{}, errors.New("store: injected failure")
	}
	return s.Store.PutBytes(ctx, data)
}

// fail makes the next n puts fail (<0: every one until fail(0)).
func (s *faultyStore) fail(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = n
}

// hang makes every put block until unhang.
func (s *faultyStore) hang(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hung = make(chan struct{})
	t.Cleanup(s.unhang)
}

func (s *faultyStore) unhang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung != nil {
		close(s.hung)
		s.hung = nil
	}
}

func (s *faultyStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts
}

// fakeChild is one attempt's "child": its task's transcript, grown a turn
// at a time.
type fakeChild struct {
	t    *testing.T
	spec call.Spec
	td   *taskdir.Dir
	dir  string // the copy of the submitter's tree it works in ("": none)
	data []byte
}

// answer appends turn n's answer to the transcript.
func (f *fakeChild) answer(n int) {
	f.t.Helper()
	f.data = fmt.Appendf(f.data, `{"type":"message","turn":%d,"message":{"role":"assistant","content":[{"type":"text","text":"answer %d"}]}}`+"\n", n, n)
	f.write()
}

// start appends a run's start record (a resumed run's, before its prompt).
func (f *fakeChild) start() {
	f.t.Helper()
	f.data = append(f.data, `{"type":"meta","agent":"explore"}`+"\n"...)
	f.write()
}

// ask appends a user message (a follow-up prompt) to the transcript.
func (f *fakeChild) ask(text string) {
	f.t.Helper()
	f.data = fmt.Appendf(f.data, `{"type":"message","message":{"role":"user","content":[{"type":"text","text":%q}]}}`+"\n", text)
	f.write()
}

func (f *fakeChild) write() {
	f.t.Helper()
	if err := os.WriteFile(f.td.File(taskdir.Session), f.data, 0o644); err != nil {
		f.t.Error(err)
	}
}

// fakeFleet is an in-process worker on the shared dev server whose calls
// run child (attempt is the activity's attempt number).
type fakeFleet struct {
	c     client.Client
	store *faultyStore
	eng   *temporal.Engine
	dir   string // the store's directory
	queue string
}

func newFakeFleet(t *testing.T, wc client.Client, child func(ctx context.Context, attempt int, f *fakeChild) *call.Result) *fakeFleet {
	t.Helper()
	return newFakeFleetWith(t, wc, false, child)
}

// newFakeFleetWith is newFakeFleet; code: the calls carry a submitter's
// tree (a repository of the test's), and the worker runs each in a copy of
// it (fakeChild.dir) whose change it takes as a real worker does.
func newFakeFleetWith(t *testing.T, wc client.Client, code bool, child func(ctx context.Context, attempt int, f *fakeChild) *call.Result) *fakeFleet {
	t.Helper()
	srv := sharedServer(t)
	c := srv.Client(t)
	if wc == nil {
		wc = c
	}
	q := newQueue(t)
	root, dir := t.TempDir(), t.TempDir()
	blobs, err := blobstore.Open(t.Context(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	store := &faultyStore{Store: blobs}
	var site *temporal.CodeSite
	ff := &fakeFleet{c: c, store: store, eng: newEngine(c, q), dir: dir, queue: q}
	runnerIn := func(copyDir string) call.Runner {
		return runnerFunc(func(ctx context.Context, s call.Spec) (*call.Result, error) {
			return ff.start(ctx, t, root, copyDir, s, child)
		})
	}
	if code {
		site = &temporal.CodeSite{Cache: &codesnap.Cache{Dir: t.TempDir()}, Blobs: blobs,
			RunnerIn: func(co *codesnap.Checkout) (call.Runner, error) { return runnerIn(co.Dir), nil }}
		ff.eng = codeEngine(t, q, submitterRepo(t), "file://"+dir)
	}
	w := temporal.NewWorker(wc, temporal.WorkerOptions{Queue: q, Concurrency: 2, Heartbeat: 200 * time.Millisecond, StopTimeout: 5 * time.Second,
		Activities: &temporal.Activities{Runner: runnerIn(""), ProjectRoot: root, Store: store, Worker: "fake", UploadEvery: 100 * time.Millisecond, Code: site}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return ff
}

// start runs one attempt's child: the task's directory in root, its
// transcript seeded from a continuation's, the child's first line.
func (ff *fakeFleet) start(ctx context.Context, t *testing.T, root, copyDir string, s call.Spec, child func(ctx context.Context, attempt int, f *fakeChild) *call.Result) (*call.Result, error) {
	{
		td, err := taskdir.Open(root).Task(cmp.Or(s.TaskID, s.Resume))
		if err != nil {
			return nil, err
		}
		if err := td.Create(); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		f := &fakeChild{t: t, spec: s, td: td, dir: copyDir}
		if s.Transcript != "" { // a continuation: the task starts from it
			if f.data, err = os.ReadFile(s.Transcript); err != nil {
				return nil, err
			}
			f.write()
		}
		s.Watch.Alive() // the child's first line
		return child(ctx, int(activity.GetInfo(ctx).Attempt), f), nil
	}
}

// objects is how many objects the fleet's store holds.
func (ff *fakeFleet) objects(t *testing.T) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(ff.dir, "sha256"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Error(err)
	}
	return n
}

// details are the heartbeat details the server has for the call's
// running attempt.
func (ff *fakeFleet) details(t *testing.T, id string) temporal.Heartbeat {
	t.Helper()
	for _, pc := range pending(t, ff.c, "brood-call-"+id) {
		return pc.HB
	}
	t.Errorf("call %s has no pending attempt on the server", id)
	return temporal.Heartbeat{}
}

// call runs one call and returns its result, failing the test when it
// takes more than three minutes.
func (ff *fakeFleet) call(t *testing.T, ctx context.Context, id string) callOut {
	t.Helper()
	return ff.run(t, ctx, call.Spec{TaskID: id, Agent: "explore", Prompt: "brief", Description: "durable points"})
}

// run is call with spec.
func (ff *fakeFleet) run(t *testing.T, ctx context.Context, spec call.Spec) callOut {
	t.Helper()
	done := make(chan callOut, 1)
	go func() {
		r, err := ff.eng.Call(ctx, spec)
		done <- callOut{r, err}
	}()
	select {
	case o := <-done:
		return o
	case <-time.After(3 * time.Minute):
		t.Fatal("the call did not end")
	}
	return callOut{}
}

// stopped waits for the child's context to end, as a real child is stopped.
func stopped(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(time.Minute):
		return false
	}
}

func result(f *fakeChild, status, summary string) *call.Result {
	return &call.Result{TaskID: f.spec.TaskID, Agent: "explore", Status: status, Summary: summary}
}

// TestCancelledAttemptRecordsItsTurn: a call's run is cancelled (Ctrl-C of
// the submitter) and a liveness beat hears it; an answer that reached the
// child's transcript meanwhile is still made durable at its turn boundary
// (the server records a stopping attempt's beats), so a retry or a resume
// acts on it and never asks it again, and the child is not told to go on.
func TestCancelledAttemptRecordsItsTurn(t *testing.T) {
	var ff *fakeFleet
	id := dispatch.NewID()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wentOn atomic.Bool
	var held temporal.Heartbeat
	var want int64
	ff = newFakeFleet(t, nil, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
		f.answer(1)
		if !f.spec.Watch.Turn(cctx, 1) {
			t.Error("turn 1 was not made durable")
		}
		cancel()                // the submitter's Ctrl-C
		for cctx.Err() == nil { // the child's pings, until a beat hears the cancel
			f.spec.Watch.Alive()
			select {
			case <-cctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		f.answer(2) // the answer that came back meanwhile
		want = int64(len(f.data))
		wentOn.Store(f.spec.Watch.Turn(cctx, 2))
		held = ff.details(t, f.spec.TaskID)
		return result(f, dispatch.StatusCancelled, "cancelled")
	})
	o := ff.call(t, ctx, id)
	if o.err != nil || o.r.Status != dispatch.StatusCancelled {
		t.Fatalf("call: %+v, %v; want it cancelled", o.r, o.err)
	}
	if wentOn.Load() {
		t.Error("the cancelled attempt's child was told to go on after its turn")
	}
	if held.TaskID != id || held.Position != want {
		t.Errorf("after the cancel the server holds %+v; want task %s's transcript up to its last answer (%d bytes)", held, id, want)
	}
}

// TestFlakyStoreHoldsTheTurn: a turn boundary whose upload fails holds the
// child, retrying the upload, until the store takes it: the child goes on
// only once the server's details name that turn's transcript.
func TestFlakyStoreHoldsTheTurn(t *testing.T) {
	var ff *fakeFleet
	id := dispatch.NewID()
	var held temporal.Heartbeat
	var want int64
	ff = newFakeFleet(t, nil, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
		f.answer(1)
		want = int64(len(f.data))
		ff.store.fail(3)
		if !f.spec.Watch.Turn(cctx, 1) {
			t.Error("the child was stopped at a turn the store took on its fourth try")
		}
		held = ff.details(t, f.spec.TaskID)
		return result(f, dispatch.StatusDone, "done")
	})
	o := ff.call(t, context.Background(), id)
	if o.err != nil || o.r.Status != dispatch.StatusDone {
		t.Fatalf("call: %+v, %v", o.r, o.err)
	}
	if held.Position != want || held.Transcript.Size != want+int64(len(temporal.TranscriptObject(id, nil))) {
		t.Errorf("when the child went on the server held %+v; want the turn's transcript (%d bytes)", held, want)
	}
}

// TestDeadStoreStopsTheChild: a store that keeps failing, or hangs, at a
// turn boundary: the child is held for the store's limit (two heartbeat
// timeouts, the attempt beating meanwhile: no second attempt starts while
// the first holds), then stopped before its next model request, and the
// attempt fails retryably; the retry continues from the last durable turn.
func TestDeadStoreStopsTheChild(t *testing.T) {
	for _, hang := range []bool{false, true} {
		t.Run(map[bool]string{false: "failing", true: "hanging"}[hang], func(t *testing.T) {
			var ff *fakeFleet
			id := dispatch.NewID()
			var wentOn, stoppedChild, firstEnded atomic.Bool
			var first, seed []byte
			ff = newFakeFleet(t, nil, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
				if attempt > 1 {
					if !firstEnded.Load() {
						t.Error("a second attempt started while the first held its turn: the server took it for dead")
					}
					ff.store.fail(0) // the store is back
					ff.store.unhang()
					seed, _ = os.ReadFile(f.spec.Transcript)
					return result(f, dispatch.StatusDone, "continued")
				}
				defer firstEnded.Store(true)
				f.answer(1)
				if !f.spec.Watch.Turn(cctx, 1) {
					t.Error("turn 1 was not made durable")
				}
				first = append([]byte(nil), f.data...)
				if hang {
					ff.store.hang(t)
				} else {
					ff.store.fail(-1)
				}
				f.answer(2)
				wentOn.Store(f.spec.Watch.Turn(cctx, 2))
				stoppedChild.Store(stopped(cctx))
				return result(f, dispatch.StatusCancelled, "stopped")
			})
			o := ff.call(t, context.Background(), id)
			if o.err != nil || o.r.Status != dispatch.StatusDone || o.r.Summary != "continued" {
				t.Fatalf("call: %+v, %v; want it continued by a second attempt", o.r, o.err)
			}
			if wentOn.Load() || !stoppedChild.Load() {
				t.Errorf("child told to go on: %v, stopped: %v; want it stopped at the turn the store never took", wentOn.Load(), stoppedChild.Load())
			}
			if string(seed) != string(first) {
				t.Errorf("the retry continued from %q; want the last durable turn's transcript %q", seed, first)
			}
		})
	}
}

// TestDeadStoreFailsTheCall: a store dead for every attempt: the call
// fails once its attempts are spent, saying why, not "cancelled".
func TestDeadStoreFailsTheCall(t *testing.T) {
	var ff *fakeFleet
	var attempts atomic.Int64
	ff = newFakeFleet(t, nil, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
		attempts.Add(1)
		ff.store.fail(-1)
		f.answer(attempt)
		f.spec.Watch.Turn(cctx, attempt)
		stopped(cctx)
		r := result(f, dispatch.StatusCancelled, "")
		r.Error = "stopped by its parent, which was cancelled, before it wrote a result"
		return r
	})
	o := ff.call(t, context.Background(), dispatch.NewID())
	if o.err != nil || o.r.Status != dispatch.StatusFailed || !strings.Contains(o.r.Error, "could not be put in the fleet store") || attempts.Load() != 3 {
		t.Fatalf("call: %+v, %v after %d attempt(s); want it failed with the store's reason after 3", o.r, o.err, attempts.Load())
	}
	// brood tasks show counts the attempts once, the server's: in its
	// header and in its result (fleetqa P2 9: 3 and 0).
	td, err := ff.eng.Task(t.Context(), o.r.TaskID)
	if err != nil || td.Attempt != 3 || td.Result == nil || td.Result.Attempts != 3 {
		t.Fatalf("tasks show: %+v, %v; want 3 attempts in its header and its result", td, err)
	}
}

// TestDeadStoreAtTheFinalAnswerReturnsIt: the final answer's sync point
// cannot be made durable (the store is dead), but the child ended with its
// result meanwhile (it does not wait at that point): the call returns that
// result in its completion, never a retry that would ask the answer again.
func TestDeadStoreAtTheFinalAnswerReturnsIt(t *testing.T) {
	var ff *fakeFleet
	id := dispatch.NewID()
	var attempts atomic.Int64
	ff = newFakeFleet(t, nil, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
		attempts.Add(1)
		ff.store.fail(-1)
		f.answer(1)
		f.spec.Watch.Turn(cctx, 1)
		return result(f, dispatch.StatusDone, "the final answer")
	})
	o := ff.call(t, context.Background(), id)
	if o.err != nil || o.r.Status != dispatch.StatusDone || o.r.Summary != "the final answer" || attempts.Load() != 1 {
		t.Fatalf("call: %+v, %v after %d attempt(s); want the final answer from the first", o.r, o.err, attempts.Load())
	}
}

// refusingClient is a client of addr whose heartbeats carry a task token
// the server cannot read while refuse is set (it answers InvalidArgument).
func refusingClient(t *testing.T, addr string, refuse, refusals *atomic.Int64) client.Client {
	in := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if hb, ok := req.(*workflowservice.RecordActivityTaskHeartbeatRequest); ok && path.Base(method) == "RecordActivityTaskHeartbeat" && refuse.Load() > 0 {
			bad := &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: []byte("not a task token"), Details: hb.Details, Identity: hb.Identity, Namespace: hb.Namespace}
			err := invoker(ctx, method, bad, reply, cc, opts...)
			if status.Code(err) == codes.InvalidArgument {
				refusals.Add(1)
			}
			return err
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	return interceptedClient(t, addr, in)
}

// TestRefusedHeartbeatStopsTheChild: the server answers a turn's heartbeat
// with InvalidArgument (a task token it cannot read: no retry of the same
// request does better, and the SDK does not cancel the attempt for it).
// The child is stopped, the attempt ends retryably, and a later attempt
// continues the call from its last durable turn.
func TestRefusedHeartbeatStopsTheChild(t *testing.T) {
	var refuse, refusals atomic.Int64
	wc := refusingClient(t, sharedServer(t).Addr, &refuse, &refusals)
	id := dispatch.NewID()
	var wentOn, stoppedChild atomic.Bool
	var first, seed []byte
	ff := newFakeFleet(t, wc, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
		if attempt > 1 {
			seed, _ = os.ReadFile(f.spec.Transcript)
			return result(f, dispatch.StatusDone, "continued")
		}
		f.answer(1)
		if !f.spec.Watch.Turn(cctx, 1) {
			t.Error("turn 1 was not made durable")
		}
		first = append([]byte(nil), f.data...)
		refuse.Store(1)
		f.answer(2)
		wentOn.Store(f.spec.Watch.Turn(cctx, 2))
		stoppedChild.Store(stopped(cctx))
		refuse.Store(0)
		return result(f, dispatch.StatusCancelled, "stopped")
	})
	o := ff.call(t, context.Background(), id)
	if o.err != nil || o.r.Status != dispatch.StatusDone || o.r.Summary != "continued" {
		t.Fatalf("call: %+v, %v; want it continued by a second attempt", o.r, o.err)
	}
	if refusals.Load() == 0 {
		t.Fatal("the server never answered InvalidArgument: the fault was not injected")
	}
	if wentOn.Load() || !stoppedChild.Load() {
		t.Errorf("child told to go on: %v, stopped: %v; want it stopped once the server refused its heartbeat", wentOn.Load(), stoppedChild.Load())
	}
	if string(seed) != string(first) {
		t.Errorf("the retry continued from %q; want the last durable turn's transcript %q", seed, first)
	}
}

// TestGoneAttemptUploadsNothing: an attempt the server gave up on (its
// heartbeat timed out: a worker stopped past it) hears it is gone at its
// next turn boundary; from then on its further turns, signs of life,
// result and (a writer's) change put nothing in the store: no one would
// read them.
func TestGoneAttemptUploadsNothing(t *testing.T) {
	for _, code := range []bool{false, true} {
		t.Run(map[bool]string{false: "no copy", true: "a writer's copy"}[code], func(t *testing.T) {
			wc, rpcs := countingClient(t, sharedServer(t).Addr)
			var ff *fakeFleet
			var wentOn atomic.Bool
			var mark atomic.Int64
			mark.Store(-1)
			callDone := make(chan struct{})
			ff = newFakeFleetWith(t, wc, code, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
				if attempt > 1 {
					return result(f, dispatch.StatusDone, "continued")
				}
				f.answer(1)
				if !f.spec.Watch.Turn(cctx, 1) {
					t.Error("turn 1 was not made durable")
				}
				// Silent past the heartbeat timeout: the server gives the
				// call to a second attempt, which finishes it.
				select {
				case <-callDone:
				case <-time.After(3 * time.Minute):
					t.Error("the call did not end after its first attempt went silent")
				}
				f.answer(2)
				wentOn.Store(f.spec.Watch.Turn(cctx, 2))
				mark.Store(int64(ff.objects(t)))
				f.answer(3)
				if f.dir != "" { // a change after it heard
					if err := os.WriteFile(filepath.Join(f.dir, "late.txt"), []byte("late\n"), 0o644); err != nil {
						t.Error(err)
					}
				}
				f.spec.Watch.Alive()
				return result(f, dispatch.StatusDone, "finished on the gone attempt")
			})
			o := ff.call(t, context.Background(), dispatch.NewID())
			close(callDone)
			if o.err != nil || o.r.Summary != "continued" {
				t.Fatalf("call: %+v, %v; want the second attempt's result", o.r, o.err)
			}
			// The first attempt ends after the call did: once the worker
			// has answered for both attempts, the store is as the gone one
			// left it.
			waitFor(t, "the gone attempt to end", 2*time.Minute, func() bool { return responses(rpcs) >= 2 })
			if wentOn.Load() {
				t.Error("the gone attempt's child was told to go on")
			}
			// None but a writer's change (its patch): taken from the copy
			// and kept for a later attempt of the call on this worker
			// that finds the task finished (pickup.go, fleetqa4 P1-3).
			want := int64(0)
			if code {
				want = 1
			}
			if n := int64(ff.objects(t)) - mark.Load(); mark.Load() < 0 || n > want {
				t.Errorf("%d object(s) put in the store after the attempt heard it was gone; want at most %d (a writer's change)", n, want)
			}
		})
	}
}

// responses is how many activity tasks a worker's client answered.
func responses(r *rpcCount) int {
	return r.get("RespondActivityTaskCompleted") + r.get("RespondActivityTaskFailed") + r.get("RespondActivityTaskCanceled")
}
