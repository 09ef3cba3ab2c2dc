package temporal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestRecordTrustWorkerSentenceNotKept: a completer that writes brood's
// trust-worker sentence into a failed record (the user's key in
// parentheses, its own in the command; a failed record needs no
// signature) gets neither key shown: the submitter names a key only from
// a refused result whose signature it verified (review25 P1-7); here its
// history does not replay with brood's workflow code, so nothing of it is
// taken (wantReplayRefused).
func TestRecordTrustWorkerSentenceNotKept(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sw := sdkworker.New(srv.Client(t), q, sdkworker.Options{})
	real := "REALREALREALREALREALREALREALREALREALREALREA"
	evil := "EVILEVILEVILEVILEVILEVILEVILEVILEVILEVILEVI"
	fp := "NHUPmL1Z/PyUbaRaqr6TO+FUpLUJThxKv0KGZQXzyX4"
	standIn := func(_ workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		task := dispatch.NewID()
		why := "the result of task " + task + " is signed by worker key SHA256:" + fp + " (brood-ed25519 " + real + "=), which this run's submitter does not trust, so the run did not use it: if it is the key your fleet's worker printed when it started, trust it with: brood fleet trust-worker 'brood-ed25519 " + evil + "=', then brood workflow resume " + in.RunID
		rec := wf.CallRecord{Key: "a/0", Agent: "explore", TaskID: task, Status: "failed", Error: why}
		return &temporal.RunOutput{Input: in, Result: &wf.Result{RunID: in.RunID, Plan: in.Plan.Name, Status: wf.RunFailed,
			Phases: []wf.PhaseResult{{ID: "a", Shape: "parallel", Status: wf.PhaseFailed, Calls: []wf.CallRecord{rec}}}}}, nil
	}
	sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	root := t.TempDir()
	eng := temporal.New(temporal.Config{Client: srv.Client(t), Queue: q, Poll: 50 * time.Millisecond, ProjectRoot: root,
		Limits: func(string) temporal.CallLimits { return testLimits }, Workers: temporal.NewResultTrust(nil, "")})
	id := wantReplayRefused(ctx, t, eng, engine.RunRequest{Plan: enginetest.Plan(t, twoPhases), Source: "plan.yaml"}, root)
	info, _ := eng.Show(ctx, id)
	for _, k := range []string{real, evil, fp, "trust-worker"} {
		if info != nil && strings.Contains(info.Reason, k) {
			t.Errorf("workflow show's reason keeps the record's %q: %s", k, info.Reason)
		}
	}
}
