package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestChainStepAttemptsFollowTheCallsLimit (issue 26): a writer's chain
// step is tried as many times as the run's calls are (temporal.attempts,
// the writer's agent's), at most the 20 a worker runs, not 5 whatever
// they say; the attempts it took are kept for the call's record (and
// workflow show), whether it went in after a failure or never did.
func TestChainStepAttemptsFollowTheCallsLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attempts int // the writer's agent's limit
		failures int // the step's first attempts that fail
		ran      int // attempts the step runs
		tries    int // what the record says (0: nothing)
		ok       bool
	}{
		{"in at the third of the default 3", 0, 2, 3, 3, true},
		{"in at the seventh of 8", 8, 6, 7, 7, true},
		// A step that never went in: the record says its attempts from
		// the server's retry state (all of them, when they ran out),
		// which the SDK's test environment does not give.
		{"8 all failed", 8, 99, 8, 0, false},
		{"capped at 20", 50, 99, 20, 0, false},
		{"first time", 2, 0, 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int32
			step := func(ctx context.Context, in ChainInput) (*ChainOutput, error) {
				n := activity.GetInfo(ctx).Attempt
				ran.Add(1)
				if int(n) <= tc.failures {
					return nil, errors.New("the worker's clone is busy")
				}
				return &ChainOutput{Tip: in.Tip, Chained: codesnap.Chained{Files: []string{"a.txt"}}, Attempt: int(n)}, nil
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
			env.SetTestTimeout(time.Minute)
			env.RegisterActivityWithOptions(step, activity.RegisterOptions{Name: ChainActivityName})
			code, _ := json.Marshal(codesnap.Result{Tree: "t", Patch: &blobstore.Ref{Key: "p"}})
			var got *RunInput
			var patch string
			env.ExecuteWorkflow(func(w workflow.Context) error {
				in := &RunInput{Queue: "q", Code: &codesnap.Snapshot{Base: "b"},
					Limits: map[string]CallLimits{"writer": {Attempts: tc.attempts}, "": {Heartbeat: time.Minute}}}
				r := &activityRunner{in: in, chainLock: workflow.NewSemaphore(w, 1)}
				out := &CallOutput{Result: call.Result{TaskID: "T", Agent: "writer", Status: dispatch.StatusDone, Code: code}}
				r.chain(w, in.Code, out)
				got, patch = in, out.Patch
				return nil
			})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if int(ran.Load()) != tc.ran {
				t.Errorf("the chain step ran %d attempt(s); want %d", ran.Load(), tc.ran)
			}
			if got.ChainTries["T"] != tc.tries {
				t.Errorf("the record's chain attempts %d; want %d", got.ChainTries["T"], tc.tries)
			}
			if want := map[bool]string{true: call.PatchApplied, false: call.PatchNotApplied}[tc.ok]; patch != want {
				t.Errorf("patch %q; want %q (%s)", patch, want, got.Chained["T"])
			}
		})
	}
}
