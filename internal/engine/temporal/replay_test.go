package temporal_test

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
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
