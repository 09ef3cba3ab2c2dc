package temporal

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/enginetest"
	wf "github.com/broodhq/brood/internal/workflow"
)

// anyArg matches any argument of a mocked activity: the value of
// testify's mock.Anything, which the SDK's test environment mocks with
// (brood does not import testify itself).
const anyArg = "mock.Anything"

// TestWritersWaitingForTheChainAreLanding (fleetqa4 P2-2): three writers
// finish at once and their chain steps run one at a time; while the first
// is put into the run's tree the other two wait for their turn with no
// activity pending. The run's progress counts all three in the chain, so
// the submitter says they are landing, never queued (no worker is waiting
// to start them: they have finished).
func TestWritersWaitingForTheChainAreLanding(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(PlanWorkflow, workflow.RegisterOptions{Name: PlanWorkflowName})
	change, _ := json.Marshal(codesnap.Result{Tree: "t", Patch: &blobstore.Ref{Key: "sha256/00", Size: 1}})
	writer := func(_ context.Context, in CallInput) (*call.Result, error) {
		return &call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "wrote", Code: change}, nil
	}
	env.RegisterActivityWithOptions(writer, activity.RegisterOptions{Name: CallActivityName})
	env.RegisterActivityWithOptions(func(context.Context, ChainInput) (*ChainOutput, error) { return nil, nil }, activity.RegisterOptions{Name: ChainActivityName})
	// Each chain step lasts ten minutes of the environment's clock.
	env.OnActivity(ChainActivityName, anyArg, anyArg).After(10*time.Minute).Return(&ChainOutput{Tip: &codesnap.Snapshot{Tree: "t2"}}, nil)
	p := enginetest.Plan(t, "name: w\nphases:\n  - id: w\n    parallel:\n      - {agent: general-purpose, prompt: one}\n      - {agent: general-purpose, prompt: two}\n      - {agent: general-purpose, prompt: three}\n")
	var got *Progress
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ProgressQuery)
		if err != nil {
			t.Errorf("progress query: %v", err)
			return
		}
		got = new(Progress)
		if err := v.Get(got); err != nil {
			t.Errorf("progress: %v", err)
		}
	}, 5*time.Minute) // the first chain step runs, the other two wait for it
	env.ExecuteWorkflow(PlanWorkflowName, RunInput{RunID: dispatch.NewID(), Plan: p, Queue: "q", Code: &codesnap.Snapshot{Tree: "t"},
		Limits: map[string]CallLimits{"": {Attempts: 1}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("the progress was never queried")
	}
	if got.Chaining != 3 {
		t.Errorf("the progress counts %d writers in the chain; want 3 (one chain step running, two waiting for it)", got.Chaining)
	}
	// What the submitter makes of it: the server shows one pending chain
	// step and no call running.
	events := append([]wf.Event(nil), got.Events...)
	splitRunning(events, 0, max(1, got.Chaining))
	for _, ev := range events {
		if ev.Phase == "w" && (ev.Queued != 0 || ev.Chaining != 3) {
			t.Errorf("phase w: %d queued, %d landing in the run's tree; want 0 and 3", ev.Queued, ev.Chaining)
		}
	}
}
