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
	brt "github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// BenchmarkPlanWorkflowTask is the plan's own code per call, on the SDK's
// test environment (no server, activities that answer at once): the CPU a
// workflow task spends to take one call's result and schedule the next,
// for plans of k calls, 12 at a time. It should not grow with k: a
// workflow task that wakes every call still waiting for a slot costs
// O(k) each.
//
//	go test ./internal/engine/temporal -run XXX -bench PlanWorkflowTask
func BenchmarkPlanWorkflowTask(b *testing.B) {
	for _, k := range []int{30, 300, 1000} {
		b.Run(fmt.Sprint("calls=", k), func(b *testing.B) {
			p, in := eachPlan(b, k, 12)
			var total time.Duration
			for b.Loop() {
				var s testsuite.WorkflowTestSuite
				env := s.NewTestWorkflowEnvironment()
				env.RegisterWorkflowWithOptions(brt.PlanWorkflow, workflow.RegisterOptions{Name: brt.PlanWorkflowName})
				env.RegisterActivityWithOptions(func(_ context.Context, in brt.CallInput) (*call.Result, error) {
					return &call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "ok"}, nil
				}, activity.RegisterOptions{Name: brt.CallActivityName})
				start := time.Now()
				env.ExecuteWorkflow(brt.PlanWorkflowName, brt.RunInput{RunID: dispatch.NewID(), Plan: p, Inputs: in, Queue: "q",
					Limits: map[string]brt.CallLimits{"": {Attempts: 1}}})
				total += time.Since(start)
				var out brt.RunOutput
				if err := env.GetWorkflowResult(&out); err != nil || out.Result.Status != wf.RunDone || out.Result.Agents != k {
					b.Fatalf("run: %v %+v", err, out.Result)
				}
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N*k), "µs/call")
		})
	}
}
