package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// boundedCalls is a stand-in's workflow: it schedules the agent activity
// on the fleet's queue once per input, one after the other, and says how
// each ended.
// With sameID, every one is scheduled under that activity id (Temporal
// keeps an id unique only among pending activities).
func boundedCalls(ctx workflow.Context, queue, sameID string, ins []temporal.CallInput) ([]string, error) {
	ao := workflow.ActivityOptions{TaskQueue: queue, StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second,
		RetryPolicy: &sdktemporal.RetryPolicy{MaximumAttempts: 1}, ActivityID: sameID}
	var got []string
	for _, in := range ins {
		var out temporal.CallOutput
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), temporal.CallActivityName, in).Get(ctx, &out); err != nil {
			got = append(got, "refused: "+err.Error())
			continue
		}
		got = append(got, "ran: "+out.Status)
	}
	return got, nil
}

// TestRunStartsNoCallPastItsBound (review17 P2-5): a stand-in that runs a
// signed submission's workflow schedules more calls than the submission
// signed. A real brood worker runs the run's first call (number 1 of a
// bound of 1) and refuses, running nothing, a call numbered past the
// bound, a second call under number 1 (another activity) and a call with
// no number; each refusal names the run, the bound or the number. A
// single call's run is bounded at one call, a plan's at its count.
func TestRunStartsNoCallPastItsBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f, worker := newSignedFleet(ctx, t)
	wp, ran := worker()
	defer func() {
		// Printed at its start, long before it ran a call.
		if !strings.Contains(wp.log(), "brood worker: submitters take its results after: brood fleet trust-worker 'brood-ed25519 ") {
			t.Errorf("the worker's start does not say how a submitter trusts it:\n%s", wp.log())
		}
	}()
	standIn := f.queue + "-stand-in"
	w := sdkworker.New(f.c, standIn, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(boundedCalls, workflow.RegisterOptions{Name: "bounded-calls"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	limits := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 1}

	single := func(t *testing.T) (string, []temporal.CallInput) {
		id := dispatch.NewID()
		wid := "brood-call-" + id
		in := f.signedCall(t, f.key, wid, id, time.Now())
		spec := in.Spec
		return wid, []temporal.CallInput{
			{Spec: spec, Signed: in.Signed, Seq: 1},
			{Spec: spec, Signed: in.Signed, Seq: 2},
			{Spec: spec, Signed: in.Signed, Seq: 1},
			{Spec: spec, Signed: in.Signed},
		}
	}
	plan := func(t *testing.T, seqs ...int) (string, []temporal.CallInput) {
		run := dispatch.NewID()
		p := &wf.Plan{Name: "one", Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{{Agent: "explore", Prompt: "answer yes"}}}}}
		signed, err := f.key.Sign(temporal.Submission{Kind: "plan", Workflow: run, Queue: f.queue, Plan: p,
			Limits: map[string]temporal.CallLimits{"": limits}, At: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		in := func(task, seq int) temporal.CallInput {
			return temporal.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "answer yes", Parent: "workflow " + run,
				Description: "one: answer yes", TaskID: temporal.PlanTaskID(run, time.Now(), uint32(task))}, Signed: signed, Seq: seq}
		}
		var ins []temporal.CallInput
		for i, seq := range seqs {
			ins = append(ins, in(i, seq))
		}
		return run, ins
	}
	const (
		past    = "call number 2 is past the 1 calls its submitter signed for the run"
		claimed = "call number 1 was claimed by another activity already"
		none    = "names no number within its run"
	)
	for _, tc := range []struct {
		name   string
		calls  func(*testing.T) (string, []temporal.CallInput)
		sameID string
		want   []string
	}{
		{"a single call", single, "", []string{"ran: done", past, claimed, none}},
		{"a plan of one call", func(t *testing.T) (string, []temporal.CallInput) { return plan(t, 1, 2, 1, 0) }, "", []string{"ran: done", past, claimed, none}},
		// Other tasks under number 1 and the first call's activity id,
		// once it completed (review23 P1-1).
		{"a plan's calls under one reused activity id", func(t *testing.T) (string, []temporal.CallInput) { return plan(t, 1, 1, 1) }, "same", []string{"ran: done", claimed, claimed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ran()
			wid, ins := tc.calls(t)
			r, err := f.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: standIn}, "bounded-calls", f.queue, tc.sameID, ins)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := r.Get(ctx, &got); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if len(got) != len(want) {
				t.Fatalf("calls: %q; want %d", got, len(want))
			}
			for i, g := range got {
				if i == 0 && g != want[0] || i > 0 && (!strings.HasPrefix(g, "refused: ") || !strings.Contains(g, want[i]) || !strings.Contains(g, "run "+wid)) {
					t.Errorf("call %d: %s\nwant %q (naming run %s)", i+1, g, want[i], wid)
				}
			}
			if n := ran() - before; n != 1 {
				t.Errorf("the worker ran %d task(s) for the run; want its one signed call only", n)
			}
		})
	}
}

// againCalls is a stand-in's workflow: it runs in under activity id
// "same", waits for the signal "again", then schedules the same input
// under the same id (free again: the first completed). Query "calls":
// how many ended.
func againCalls(ctx workflow.Context, queue string, in temporal.CallInput) ([]string, error) {
	ao := workflow.ActivityOptions{TaskQueue: queue, StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second,
		RetryPolicy: &sdktemporal.RetryPolicy{MaximumAttempts: 1}, ActivityID: "same"}
	var got []string
	if err := workflow.SetQueryHandler(ctx, "calls", func() (int, error) { return len(got), nil }); err != nil {
		return nil, err
	}
	for i := range 2 {
		if i > 0 {
			workflow.GetSignalChannel(ctx, "again").Receive(ctx, nil)
		}
		var out temporal.CallOutput
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), temporal.CallActivityName, in).Get(ctx, &out); err != nil {
			got = append(got, "refused: "+err.Error())
			continue
		}
		got = append(got, "ran: "+out.Status)
	}
	return got, nil
}

// TestSameCallAgainRunsNowhereElse (review25 P3-2): a stand-in runs a
// plan's call (number 1) on one brood worker, which then goes away, and
// schedules the very same input again under the same activity id: the
// second brood worker, which has no record of the task, refuses it (a
// new activity of a number already claimed, not the server's retry of
// it) and runs nothing.
func TestSameCallAgainRunsNowhereElse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f, worker := newSignedFleet(ctx, t)
	first, ranFirst := worker()
	standIn := f.queue + "-stand-in"
	w := sdkworker.New(f.c, standIn, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(againCalls, workflow.RegisterOptions{Name: "again-calls"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	limits := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 1}
	run := dispatch.NewID()
	p := &wf.Plan{Name: "one", Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{{Agent: "explore", Prompt: "answer yes"}}}}}
	signed, err := f.key.Sign(temporal.Submission{Kind: "plan", Workflow: run, Queue: f.queue, Plan: p,
		Limits: map[string]temporal.CallLimits{"": limits}, At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	in := temporal.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "answer yes", Parent: "workflow " + run,
		Description: "one: answer yes", TaskID: temporal.PlanTaskID(run, time.Now(), 1)}, Signed: signed, Seq: 1}
	r, err := f.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: run, TaskQueue: standIn}, "again-calls", f.queue, in)
	if err != nil {
		t.Fatal(err)
	}
	waitCLI(t, "the first call's end", func() bool {
		v, err := f.c.QueryWorkflow(ctx, run, "", "calls")
		var n int
		return err == nil && v.Get(&n) == nil && n == 1
	})
	first.kill()
	_, ranSecond := worker()
	if err := f.c.SignalWorkflow(ctx, run, "", "again", nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := r.Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "ran: done" || !strings.Contains(got[1], "call number 1 ran already as this very activity") || !strings.Contains(got[1], "run "+run) {
		t.Errorf("calls: %q; want the first run, the second refused (naming the run and its number)", got)
	}
	if n, m := ranFirst(), ranSecond(); n != 1 || m != 0 {
		t.Errorf("the first worker ran %d task(s), the second %d; want the one call run once", n, m)
	}
}
