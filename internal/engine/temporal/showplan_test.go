package temporal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestShowRunsNotTheCompletersPlan: a completer that returns, as the
// run's plan, an until_quiet of a billion rounds does not get Show to
// execute it while recomputing the run's outputs: the submitter takes no
// output of the workflow's (the run's history does not replay with
// brood's code, so Run and Show refuse it), and makes outputs again only
// from a plan its key signed (review23 P2, review25 P2-1).
func TestShowRunsNotTheCompletersPlan(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sw := sdkworker.New(srv.Client(t), q, sdkworker.Options{})
	p := enginetest.Plan(t, "name: p\nphases:\n  - id: loop\n    until_quiet: {agent: explore, prompt: \"x\", key: k, quiet_rounds: 2, max_rounds: 3, schema: {type: object, properties: {findings: {type: array}}, required: [findings]}}\n")
	p.Phases[0].UntilQuiet.MaxRounds, p.Phases[0].UntilQuiet.QuietRounds = 1000000000, 1000000000
	standIn := func(_ workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		in.Plan = p
		return &temporal.RunOutput{Input: in, Result: &wf.Result{RunID: in.RunID, Plan: "p", Status: wf.RunFailed}}, nil
	}
	sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	eng := temporal.New(temporal.Config{Client: srv.Client(t), Queue: q, Poll: 50 * time.Millisecond, ProjectRoot: t.TempDir(),
		Limits: func(string) temporal.CallLimits { return testLimits }, Workers: temporal.NewResultTrust(nil, "")})
	var id string
	_, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, twoPhases), Source: "plan.yaml", Started: func(s string) { id = s }})
	if err == nil || !strings.Contains(err.Error(), "does not replay with brood's own workflow code") {
		t.Fatalf("run: %v; want its history refused: it does not replay with brood's workflow code", err)
	}
	done := make(chan error, 1)
	go func() {
		info, err := eng.Show(ctx, id)
		if err == nil && (info.Status != wf.RunFailed || !strings.Contains(info.Reason, "does not replay")) {
			err = fmt.Errorf("show: %s (%s); want failed: its history does not replay", info.Status, info.Reason)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Show still running after a minute: it executes the plan the run's completer chose")
	}
}
