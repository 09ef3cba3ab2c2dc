package temporal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/enginetest"
	brt "github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// BenchmarkPlanWorkflowTask is the plan's own code per call, on the SDK's
// test environment (no server, activities that answer at once): the CPU a
// workflow task spends to take one call's result and schedule the next,
// for plans of k calls, 12 at a time. It should not grow with k: a
// workflow task that wakes every call still waiting for a slot costs
// O(k) each. Each result is signed, as a brood worker signs it; checked:
// the workflow checks it before it uses it (wfcheck.go); unchecked: no
// worker keys in the run, as runs were before.
//
//	go test ./internal/engine/temporal -run XXX -bench PlanWorkflowTask
func BenchmarkPlanWorkflowTask(b *testing.B) {
	for _, k := range []int{30, 300, 1000} {
		for _, checked := range []bool{false, true} {
			b.Run(fmt.Sprintf("calls=%d/checked=%v", k, checked), func(b *testing.B) {
				benchPlanTask(b, k, checked)
			})
		}
	}
}

func benchPlanTask(b *testing.B, k int, checked bool) {
	p, in := eachPlan(b, k, 12)
	var workers *brt.WorkerSet
	if checked {
		workers = &brt.WorkerSet{Keys: [][]byte{brt.SeededPublic(5)}}
	}
	var total time.Duration
	for b.Loop() {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflowWithOptions(brt.PlanWorkflow, workflow.RegisterOptions{Name: brt.PlanWorkflowName})
		env.RegisterActivityWithOptions(func(ctx context.Context, in brt.CallInput) (*brt.CallOutput, error) {
			out := &brt.CallOutput{Result: call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "ok"}}
			brt.SignResultAs(ctx, 5, in, out) // as a brood worker does
			return out, nil
		}, activity.RegisterOptions{Name: brt.CallActivityName})
		start := time.Now()
		env.ExecuteWorkflow(brt.PlanWorkflowName, brt.RunInput{RunID: dispatch.NewID(), Plan: p, Inputs: in, Queue: "q",
			Limits: map[string]brt.CallLimits{"": {Attempts: 1}}, Workers: workers})
		total += time.Since(start)
		var out brt.RunOutput
		if err := env.GetWorkflowResult(&out); err != nil || out.Result.Status != wf.RunDone || out.Result.Agents != k {
			b.Fatalf("run: %v %+v", err, out.Result)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N*k), "µs/call")
}

// TestCancelledPlanEndsEveryWaitingCall: a plan cancelled while one call
// runs and the others wait for its slot (some of them not started yet:
// runtime.go starts a call's coroutine only when no call waits) ends, with
// every call recorded cancelled and only the running one ever scheduled.
func TestCancelledPlanEndsEveryWaitingCall(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(brt.PlanWorkflow, workflow.RegisterOptions{Name: brt.PlanWorkflowName})
	scheduled := 0
	env.RegisterActivityWithOptions(func(ctx context.Context, in brt.CallInput) (*call.Result, error) {
		scheduled++
		<-ctx.Done()
		return nil, ctx.Err()
	}, activity.RegisterOptions{Name: brt.CallActivityName})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	p := enginetest.Plan(t, `
name: waiting
concurrency: 1
phases:
  - id: a
    parallel: [{agent: explore, prompt: "one"}, {id: two, agent: explore, prompt: "two"}, {agent: explore, prompt: "three", depends_on: [two]}]
  - id: b
    each: inputs.items[*]
    stages: [{agent: explore, prompt: "item {{item}}"}]
inputs:
  items: {type: list}
`)
	env.ExecuteWorkflow(brt.PlanWorkflowName, brt.RunInput{RunID: dispatch.NewID(), Plan: p, Queue: "q",
		Inputs: map[string]any{"items": []any{"x", "y", "z"}}, Limits: map[string]brt.CallLimits{"": {Attempts: 1}}})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the cancelled run never ended")
	}
	var out brt.RunOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Result.Status != wf.RunCancelled || scheduled != 1 {
		t.Fatalf("status %s with %d calls scheduled; want cancelled with 1: %+v", out.Result.Status, scheduled, out.Result.Phases)
	}
	for _, ph := range out.Result.Phases {
		for _, c := range ph.Calls {
			if c.Status != wf.CallCancelled && c.Status != wf.CallSkipped {
				t.Errorf("call %s ended %s; want cancelled", c.Key, c.Status)
			}
		}
	}
}
