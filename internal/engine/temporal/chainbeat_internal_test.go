package temporal

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// TestChainStepBeats (issue 26, a tester's P1-2): a chain step has the
// run's heartbeat timeout and beats while it works, so a worker that dies
// in it is noticed within that timeout and the step moves on, instead of
// waiting out its 30 minutes while every listing says the run is running.
// The step here outlasts its heartbeat timeout several times over: the
// test environment times it out unless it beats.
func TestChainStepBeats(t *testing.T) {
	const hb = 2 * time.Second
	if ao := chainOptions("q", hb, "T"); ao.HeartbeatTimeout != hb || ao.StartToCloseTimeout < hb {
		t.Fatalf("chain options: heartbeat timeout %s, start-to-close %s; want %s and longer", ao.HeartbeatTimeout, ao.StartToCloseTimeout, hb)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	beats := 0
	enough := make(chan struct{})
	var once sync.Once
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) {
		if beats++; beats >= 4 { // four beats span more than a heartbeat timeout
			once.Do(func() { close(enough) })
		}
	})
	step := func(ctx context.Context) error {
		stop := beatUntilStopped(ctx)
		defer stop()
		select { // the work: until the beats have carried it past its timeout
		case <-enough:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	env.RegisterActivityWithOptions(step, activity.RegisterOptions{Name: ChainActivityName})
	env.ExecuteWorkflow(func(w workflow.Context) error {
		ao := chainOptions("q", hb, "T")
		ao.RetryPolicy.MaximumAttempts = 1
		return workflow.ExecuteActivity(workflow.WithActivityOptions(w, ao), ChainActivityName).Get(w, nil)
	})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the chain step did not outlast its heartbeat timeout: %v", err)
	}
}
