package temporal_test

import (
	"os"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestPlanReplaysItsHistory: a plan whose calls wait for slots (an each
// of 8 calls, 2 at a time) replays from its history on the workflow's
// code without a non-determinism error: the calls' coroutines, started
// only when no call waits for a slot (runtime.go), schedule the same
// activities in the same order on replay. The run's history carries the
// version marker that chose them (runs from before it replay as they ran).
func TestPlanReplaysItsHistory(t *testing.T) {
	c := sharedServer(t).Client(t)
	q := newQueue(t)
	startWorker(t, c, q, fleetScript(0), 2, &temporal.DirStore{Dir: t.TempDir()})
	p, in := eachPlan(t, 8, 2)
	_, id := timedRunID(t, newEngine(c, q), p, in, 8)
	h := &historypb.History{}
	it := c.GetWorkflowHistory(t.Context(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	marked := false
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		marked = marked || e.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED
		h.Events = append(h.Events, e)
	}
	if !marked {
		t.Fatal("the run's history has no version marker: it did not run with lazily started calls")
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(temporal.PlanWorkflow, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatalf("replaying run %s: %v", id, err)
	}
}

// TestPlanFromBeforeLazyCallsReplays: the history of a run made before
// calls' coroutines started lazily (main at a5d7cd61: an each of 4 calls,
// 1 at a time, so 3 waited for the slot; testdata) replays on today's
// code without a non-determinism error (it has no version marker). What it
// proves is that such a history replays; since this plan schedules its
// activities in the same order lazily or eagerly, it would also pass if
// the eager path were not taken. A worker that picks up such a run after
// an upgrade goes on with it.
func TestPlanFromBeforeLazyCallsReplays(t *testing.T) {
	f, err := os.Open("testdata/plan-history-before-lazy-calls.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range h.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED {
			t.Fatal("the fixture has a version marker: it is not a run from before the change")
		}
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(temporal.PlanWorkflow, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatalf("replaying a run from before lazy calls: %v", err)
	}
}

// TestPlanWithCheckedResultsV1Replays: the history of a two-phase run
// whose workflow checked each call's result against the worker keys its
// submitter sent (checked-results version 1; a real brood worker signed
// the results with a v1 signature; testdata) replays on today's code
// without a non-determinism error. The check is part of the workflow's
// determinism: any change to what ResultTrust.check accepts (resultDigest,
// the claim, the execution rule) must keep accepting what this history's
// workflow accepted, or take a new checkedResultsVersion branch. The
// replayer is given the run's id, as a worker's replay has it.
func TestPlanWithCheckedResultsV1Replays(t *testing.T) {
	f, err := os.Open("testdata/plan-history-checked-results-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(temporal.PlanWorkflow, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: "01M94T3Q5CB82KEP6NYQ7CAXT1"}}
	if err := r.ReplayWorkflowHistoryWithOptions(nil, h, opts); err != nil {
		t.Fatalf("replaying a run whose workflow checked its results: %v", err)
	}
}
