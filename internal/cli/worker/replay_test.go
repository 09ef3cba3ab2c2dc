package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
)

// signedFleet is a real dev server, a store, and a `brood worker` that
// trusts one key, with a client to it that writes workflow and activity
// inputs itself: a captured submission's replayer, or a forger.
type signedFleet struct {
	queue, store string
	c            client.Client
	key          *temporal.Signer
	other        *temporal.Signer
}

// newSignedFleet starts the server; worker starts a worker (in a
// repository of its own) and returns it and how many tasks it ran.
func newSignedFleet(ctx context.Context, t *testing.T) (f *signedFleet, worker func() (*proc, func() int)) {
	t.Helper()
	srv := devserver.Start(t)
	f = &signedFleet{queue: fmt.Sprintf("replay-%d", os.Getpid()), store: "file://" + t.TempDir()}
	var pub string
	f.key, pub = keyIn(t)
	f.other, _ = keyIn(t)
	worker = func() (*proc, func() int) {
		wp := workerProject(t, cliScript)
		p := startBrood(t, wp, nil, "brood worker: task queue", "worker", "--concurrency", "2", "--trusted-key", pub,
			"--temporal", srv.Addr, "--task-queue", f.queue, "--store", f.store)
		return p, func() int { return len(tasks(wp)) }
	}
	blobs, err := blobstore.Open(ctx, f.store)
	if err != nil {
		t.Fatal(err)
	}
	if f.c, err = temporal.Dial(ctx, temporal.ClientOptions{HostPort: srv.Addr, ClaimStore: blobs}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.c.Close)
	return f, worker
}

func keyIn(t *testing.T) (*temporal.Signer, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fleet")
	line, err := temporal.GenerateKey(dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := temporal.LoadSigner(filepath.Join(dir, temporal.PrivateKeyFile))
	if err != nil || s == nil {
		t.Fatalf("load the key: %v", err)
	}
	return s, line
}

// signedCall is a call submission signed by s for workflow wid, signed at.
func (f *signedFleet) signedCall(t *testing.T, s *temporal.Signer, wid, taskID string, at time.Time) temporal.CallInputW {
	t.Helper()
	limits := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 1}
	in := temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "answer yes", TaskID: taskID}, Queue: f.queue, Limits: limits}
	var err error
	if in.Signed, err = s.Sign(temporal.Submission{Kind: "call", Workflow: wid, Queue: f.queue, Spec: &in.Spec,
		Limits: map[string]temporal.CallLimits{"": limits}, At: at}); err != nil {
		t.Fatal(err)
	}
	return in
}

func (f *signedFleet) run(ctx context.Context, wid string, in temporal.CallInputW) (*temporal.CallOutput, error) {
	r, err := f.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: f.queue}, temporal.CallWorkflowName, in)
	if err != nil {
		return nil, err
	}
	var out temporal.CallOutput
	return &out, r.Get(ctx, &out)
}

// TestReplayedSubmissionIsRefused: a signed call runs once, on a worker
// that then goes away. Its captured input started again under its own workflow id after the run ended, or
// under another id, is refused and runs nothing; one signed longer ago than
// a submission's lifetime is refused too. Started again under its own id
// while it is open (queued: no worker yet), Temporal's own dedupe gives
// back the open run (WorkflowExecutionErrorWhenAlreadyStarted unset).
func TestReplayedSubmissionIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f, worker := newSignedFleet(ctx, t)
	id := dispatch.NewID()
	wid := "brood-call-" + id
	captured := f.signedCall(t, f.key, wid, id, time.Now())
	// Queued (no worker yet) and started again under its id: Temporal
	// gives back the open run, not a second one.
	opts := client.StartWorkflowOptions{ID: wid, TaskQueue: f.queue}
	r1, err := f.c.ExecuteWorkflow(ctx, opts, temporal.CallWorkflowName, captured)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := f.c.ExecuteWorkflow(ctx, opts, temporal.CallWorkflowName, captured)
	if err != nil || r2.GetRunID() != r1.GetRunID() {
		t.Fatalf("started again while open: %v, run %s; want the open run %s", err, r2.GetRunID(), r1.GetRunID())
	}
	first, ran := worker()
	var out temporal.CallOutput
	if err := r1.Get(ctx, &out); err != nil || out.Status != dispatch.StatusDone || !strings.Contains(out.Summary, "yes, from the fleet") {
		t.Fatalf("the signed call: %v, %+v", err, out)
	}
	if ran() != 1 {
		t.Fatalf("the worker ran %d tasks, want the one call", ran())
	}
	// A worker that never saw the task: nothing of it is in its records.
	first.kill()
	_, ran = worker()
	old := dispatch.NewID() // a call of its own: a single call's workflow is its task's
	for _, tc := range []struct {
		name, wid, want string
		in              temporal.CallInputW
	}{
		{"same workflow id, after it finished", wid, "already ran on the fleet", captured},
		{"another workflow id", "brood-call-" + dispatch.NewID(), "signed for workflow", captured},
		{"signed too long ago", "brood-call-" + old, "was signed 25h0m0s ago",
			f.signedCall(t, f.key, "brood-call-"+old, old, time.Now().Add(-25*time.Hour))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.run(ctx, tc.wid, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("replayed submission: %v (%+v), want refused saying %q", err, out, tc.want)
			}
			if ran() != 0 {
				t.Fatalf("the worker ran a replayed submission: %d tasks", ran())
			}
		})
	}
	// brood tasks show of the call is its own run, not the refused replay
	// started later under its id, and says so.
	d, err := temporal.New(temporal.Config{Client: f.c, Queue: f.queue}).Task(ctx, id)
	if err != nil || d.Status != dispatch.StatusDone || d.Result == nil || !strings.Contains(d.Result.Summary, "yes, from the fleet") || !strings.Contains(d.LastFailure, "was refused") {
		t.Fatalf("tasks show after a refused replay: %+v (%v); want the call's own run, done, and the refusal named", d, err)
	}
}

// forgedChain is a workflow an attacker runs on a worker of their own: it
// schedules brood.chain on the fleet's task queue with an input of its
// choosing.
func forgedChain(ctx workflow.Context, queue string, in temporal.ChainInput) (string, error) {
	// Two attempts: a refusal for an untrusted key is tried again (another
	// worker of the queue may trust it), a forger's own policy bounds it.
	ao := workflow.ActivityOptions{TaskQueue: queue, StartToCloseTimeout: time.Minute,
		RetryPolicy: &sdktemporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 2}}
	var out temporal.ChainOutput
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), temporal.ChainActivityName, in).Get(ctx, &out)
	if err != nil {
		return err.Error(), nil
	}
	return "ran", nil
}

// TestForgedChainIsRefused: the chain activity (a writer's change into a
// run's tree, on a worker's clone cache) checks the submission's signature
// as the agent activity does. A forger's own workflow schedules it on the
// fleet's queue unsigned, signed by a key the worker does not trust, and
// with a trusted plan signature captured from another run: each is refused
// before the worker touches its cache.
func TestForgedChainIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f, worker := newSignedFleet(ctx, t)
	worker()
	own := f.queue + "-forger"
	w := sdkworker.New(f.c, own, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(forgedChain, workflow.RegisterOptions{Name: "forged-chain"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	snap := &codesnap.Snapshot{Repo: "root:" + strings.Repeat("1", 40), Base: strings.Repeat("1", 40), Tree: strings.Repeat("2", 40), ObjectFormat: "sha1"}
	plan := func(s *temporal.Signer, wid string) *temporal.Signed {
		sg, err := s.Sign(temporal.Submission{Kind: "plan", Workflow: wid, Queue: f.queue, Code: snap, At: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return sg
	}
	change := codesnap.Change{Start: snap, Result: &codesnap.Result{}}
	for _, tc := range []struct {
		name, want string
		signed     *temporal.Signed
	}{
		{"unsigned", "this one is unsigned", nil},
		{"foreign key", "do not trust", plan(f.other, "forged-foreign")},
		{"captured from another run", "signed for workflow \"a-real-run\"", plan(f.key, "a-real-run")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wid := "forged-" + dispatch.NewID()
			in := temporal.ChainInput{TaskID: "T1", Tip: snap, Change: change, Signed: tc.signed}
			r, err := f.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: own}, "forged-chain", f.queue, in)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if err := r.Get(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("forged chain: %q, want refused saying %q", got, tc.want)
			}
		})
	}
}
