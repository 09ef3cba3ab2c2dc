package temporal_test

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/workflow"
)

// TestTwiceStoppedPlanCallContinues (issue 26): a signed run is cancelled
// while its call runs (execution 1 keeps the call's heartbeat, signed in
// it); a resume starts execution 2 while no worker is up, and is
// cancelled before the call runs again (its continuation is still
// execution 1's, pinned by execution 2's own submission). The next resume
// continues the call from that transcript — where starting it over would
// wait forever again.
func TestTwiceStoppedPlanCallContinues(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	a := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 1)
	key, _ := newKey(t)
	eng := temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond, Signer: key,
		Limits: func(string) temporal.CallLimits { return testLimits }})
	p := enginetest.Plan(t, "name: stopped\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"wait forever\"}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := make(chan string, 1)
	done := make(chan *workflow.Result, 1)
	go func() {
		res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(id string) { ids <- id }})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	id := <-ids
	var first pendingCall
	waitFor(t, "the call's heartbeat with its transcript", 90*time.Second, func() bool {
		for _, pc := range pending(t, c, id) {
			if !pc.HB.Transcript.IsZero() && pc.HB.Position > 0 {
				first = pc
				return true
			}
		}
		return false
	})
	cancel()
	if res := <-done; res == nil || res.Status != workflow.RunCancelled {
		t.Fatalf("run %+v; want cancelled", res)
	}
	x1, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	a.kill()

	// Execution 2: started with no worker up, cancelled before it runs.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	second := make(chan *workflow.Result, 1)
	go func() {
		res, _ := eng.Resume(ctx2, id, nil)
		second <- res
	}()
	waitFor(t, "the resume's execution on the server", time.Minute, func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetExecution().GetRunId() != x1.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	})
	cancel2()
	b := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 1)
	<-second
	waitFor(t, "execution 2 ended", time.Minute, func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	})

	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer rcancel()
	again, err := eng.Resume(rctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := again.Phases[0].Calls[0]
	if again.Status != workflow.RunDone || call.Output != "picked up again and finished" || call.TaskID != first.HB.TaskID {
		t.Fatalf("resumed run %s, call %+v; want task %s continued from execution 1's transcript", again.Status, call, first.HB.TaskID)
	}
	if !b.taskDirs()[call.TaskID] {
		t.Fatalf("task %s did not continue on the new worker", call.TaskID)
	}
}
