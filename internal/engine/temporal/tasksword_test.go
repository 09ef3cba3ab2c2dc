package temporal_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestTasksSaysAMemoStatusIsUnchecked: a stand-in completes a call's
// workflow with a memo that says done: brood tasks lists its status as
// the workflow's unchecked word (FleetTask.Unchecked), never as brood's.
func TestTasksSaysAMemoStatusIsUnchecked(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	standIn := func(w workflow.Context, in temporal.CallInputW) (*temporal.CallOutput, error) {
		_ = workflow.UpsertMemo(w, map[string]any{"brood_status": "done"})
		return &temporal.CallOutput{Result: call.Result{TaskID: in.Spec.TaskID, Status: dispatch.StatusDone, Text: "all good"}}, nil
	}
	sw := sdkworker.New(srv.Client(t), q, sdkworker.Options{})
	sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.CallWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	c := srv.Client(t)
	id := dispatch.NewID()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + id, TaskQueue: q}, temporal.CallWorkflowName,
		temporal.CallInputW{Spec: call.Spec{TaskID: id, Agent: "explore", Prompt: "x"}, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ts, err := newEngine(c, q).Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range ts {
		if ft.ID == id {
			if ft.Status == dispatch.StatusDone && !ft.Unchecked {
				t.Fatalf("brood tasks lists the stand-in's call %+v: done, as if brood's word; want it marked unchecked", ft)
			}
			return
		}
	}
	t.Fatalf("brood tasks does not list call %s: %+v", id, ts)
}
