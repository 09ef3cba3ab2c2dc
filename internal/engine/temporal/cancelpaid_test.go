package temporal_test

import (
	"context"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

// TestCancelledRunCountsItsFinishedTurns (issue 26 F6): a run cancelled
// while its call waits for its second turn counts the first turn it paid
// for, as the local engine's cancelled run counts its child's usage: the
// worker signs the cancelled call's result, its figures with it, and a
// submitter that takes only trusted workers' results takes them.
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-m.arrivedAt(held): // turn 0 answered and paid for
			cancel()
		case <-time.After(3 * time.Minute):
		}
	}()
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
	if c := res.Phases[0].Calls[0]; c.Usage.Input != turnUsage.Input {
		t.Errorf("the cancelled call's usage %+v; want its finished turn's %+v", c.Usage, turnUsage)
	}
	// The resume counts the whole call once, as before: its three turns.
	m.release(held)
	again, err := eng.Resume(context.Background(), res.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != workflow.RunDone || again.Usage.Input != 3*turnUsage.Input {
		t.Errorf("the resume: %s, usage %+v; want done, the call's three turns (%d in)", again.Status, again.Usage, 3*turnUsage.Input)
	}
	if n := m.askedN(turnKey{held.call, 0}); n != 1 {
		t.Errorf("turn 0 asked %d times; want once", n)
	}
}
