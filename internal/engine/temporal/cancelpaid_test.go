package temporal_test

import (
	"context"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

// runCancelled is brood's own reason for a call the run's cancel stopped:
// never the child's (the child writes what it likes into its result).
const runCancelled = "the run was cancelled during this call"

// cancelAtTurn cancels when m is asked turn k (the turns before it
// answered and paid for); the returned cancel is the context's.
func cancelAtTurn(t *testing.T, m *turnModel, k turnKey) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		select {
		case <-m.arrivedAt(k):
			cancel()
		case <-ctx.Done():
		case <-time.After(3 * time.Minute):
		}
	}()
	return ctx, cancel
}

// TestCancelledRunCountsItsFinishedTurns (issue 26 F6): a run cancelled
// while its call waits for its second turn counts the first turn it paid
// for, as the local engine's cancelled run counts its child's usage: the
// worker signs the cancelled call's result, its figures with it, and a
// submitter that takes only trusted workers' results takes them. The
// call's reason is brood's own, never the child's (review37 P3-3), in
// the run's result, in workflow show and in the journal it keeps.
func TestCancelledRunCountsItsFinishedTurns(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	held := turnKey{"paid: count the files", 1}
	m.hold(held)
	startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...)
	eng, _ := trustingEngine(t, q, submitterRepo(t), store, fleetWorkerPub())
	p := enginetest.Plan(t, "name: paid\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"count the files\"}]\n")
	ctx, _ := cancelAtTurn(t, m, held) // turn 0 answered and paid for
	res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunCancelled {
		t.Fatalf("status %s; want cancelled: %+v", res.Status, res.Phases)
	}
	if got := res.Usage; got.Input != turnUsage.Input || got.Output != turnUsage.Output {
		t.Errorf("the cancelled run's usage %+v; want its one finished turn's %+v", got, turnUsage)
	}
	checkCancelledRecord(t, "the run's", res.Phases[0].Calls[0])
	info, err := eng.Show(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Usage.Input != turnUsage.Input || info.Result == nil {
		t.Fatalf("workflow show: usage %+v, result %v; want the finished turn's usage and the result", info.Usage, info.Result != nil)
	}
	checkCancelledRecord(t, "workflow show's", info.Result.Phases[0].Calls[0])
}

// checkCancelledRecord: c is a call the run's cancel stopped after one
// paid turn: cancelled, with that turn's usage, its worker and attempt,
// and brood's reason.
func checkCancelledRecord(t *testing.T, where string, c workflow.CallRecord) {
	t.Helper()
	if c.Status != workflow.CallCancelled || c.Usage.Input != turnUsage.Input || c.Usage.Output != turnUsage.Output {
		t.Errorf("%s record of the cancelled call: %s, usage %+v; want cancelled with its finished turn's %+v", where, c.Status, c.Usage, turnUsage)
	}
	if c.Attempts < 1 || c.Worker == "" {
		t.Errorf("%s record of the cancelled call: attempts %d, worker %q; want its signed attempt and worker", where, c.Attempts, c.Worker)
	}
	if c.RanMS <= 0 {
		t.Errorf("%s record of the cancelled call: ran %d ms; want the server's time from its attempt's start to its cancel", where, c.RanMS)
	}
	if c.Error != runCancelled {
		t.Errorf("%s record of the cancelled call says %q; want brood's %q", where, c.Error, runCancelled)
	}
}

// TestCancelledSingleCallCountsItsFinishedTurns (review37 P3-2): a single
// fleet call (brood subagent --engine temporal, a parent's delegated
// call) cancelled while it waits for its second turn is taken as a plan's
// call is: cancelled, the first turn's usage, its attempt and worker as
// the trusted worker signed them, and brood's reason, never the child's;
// brood tasks show says the same.
func TestCancelledSingleCallCountsItsFinishedTurns(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	const desc = "single paid"
	held := turnKey{desc, 1}
	m.hold(held)
	startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...)
	eng, _ := trustingEngine(t, q, submitterRepo(t), store, fleetWorkerPub())
	ctx, _ := cancelAtTurn(t, m, held)
	id := dispatch.NewID()
	r, err := eng.Call(ctx, call.Spec{TaskID: id, Agent: "explore", Prompt: "count the files", Description: desc})
	if err != nil {
		t.Fatal(err)
	}
	checkCancelledCall(t, "the call's", r)
	d, err := eng.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Result == nil {
		t.Fatalf("tasks show of the cancelled call has no result: %+v", d)
	}
	checkCancelledCall(t, "tasks show's", d.Result)
	if d.Status != dispatch.StatusCancelled || d.Worker == "" {
		t.Errorf("tasks show: status %s, worker %q; want cancelled, and the worker that signed it", d.Status, d.Worker)
	}
}

// checkCancelledCall is checkCancelledRecord for a single call's result.
func checkCancelledCall(t *testing.T, where string, r *call.Result) {
	t.Helper()
	checkCancelledRecord(t, where, workflow.CallRecord{Status: r.Status, Usage: r.Usage, Attempts: r.Attempts, Worker: r.Worker, Error: r.Error, RanMS: r.RanMS})
}
