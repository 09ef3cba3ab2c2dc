package temporal_test

// Issue 26, review21 P3-1 and P3-3: a result's usage, attempts and worker
// are signed with it, its landing is the submitter's to say, and its
// queued and run times come from the server's history, never from whoever
// completed the call.

import (
	"context"
	"strings"
	"testing"
	"time"

	sdkactivity "go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestSignedResultFiguresAreTheWorkers: a stand-in that polls the call's
// queue completes its activity with a result genuinely signed by a
// trusted worker key for that very call, then alters what the signature
// must cover (usage, attempts, the worker that ran it): refused, none of
// its figures shown. Untouched, it is taken with the signed figures, the
// signer's name as its worker, no landing of the stand-in's saying, and
// the queued and run split of the server's history, not the result's
// Started.
func TestSignedResultFiguresAreTheWorkers(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t) + "-stand-in"
	store := "file://" + t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const ran = 300 * time.Millisecond
	var alter func(*temporal.CallOutput)
	forged := func(ctx context.Context, in temporal.CallInput) (*temporal.CallOutput, error) {
		// The stand-in's own work, so that the attempt's run is long
		// enough to tell from its queueing.
		time.Sleep(ran)
		out := &temporal.CallOutput{Result: call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "fine", Text: "fine",
			Usage: model.Usage{Input: 10, Output: 5}, Attempts: 1}, Last: &temporal.Heartbeat{TaskID: in.Spec.TaskID}}
		temporal.SignResultAsFleetWorker(ctx, testbrood.FleetSeed, in, "honest:1", out)
		// Said after signing: a landing and a start of its own.
		out.Patch, out.Started = call.PatchApplied, time.Now().UTC()
		alter(out)
		return out, nil
	}
	sw := sdkworker.New(srv.Client(t), q, sdkworker.Options{})
	sw.RegisterWorkflowWithOptions(temporal.CallWorkflow, workflow.RegisterOptions{Name: temporal.CallWorkflowName})
	sw.RegisterWorkflowWithOptions(temporal.PlanWorkflow, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	sw.RegisterActivityWithOptions(forged, sdkactivity.RegisterOptions{Name: temporal.CallActivityName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	spec := call.Spec{Agent: "general-purpose", Prompt: "look", Description: "look"}
	for _, tc := range []struct {
		name  string
		alter func(*temporal.CallOutput)
		want  string
	}{
		{"its usage raised", func(o *temporal.CallOutput) { o.Usage.Input = 1_000_000 }, "not what worker key"},
		{"its attempts raised", func(o *temporal.CallOutput) { o.Attempts = 7 }, "not what worker key"},
		{"another worker named", func(o *temporal.CallOutput) { o.Worker = "elsewhere:9" }, "not what worker key"},
		{"as signed", func(*temporal.CallOutput) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alter = tc.alter
			eng, _ := trustingEngine(t, q, submitterRepo(t), store, fleetWorkerPub())
			r, err := eng.Call(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if r.Status != dispatch.StatusFailed || !strings.Contains(r.Error, tc.want) || r.Usage != (model.Usage{}) || r.Attempts != 0 || r.Worker != "" || r.Patch != "" {
					t.Errorf("an altered signed result: %s, error %q, usage %+v, attempts %d, worker %q, patch %q; want failed saying %q, none of its figures", r.Status, r.Error, r.Usage, r.Attempts, r.Worker, r.Patch, tc.want)
				}
				// brood tasks show names no worker for a result it did not
				// take: the poller named itself (review23 P3-3).
				if d, err := eng.Task(ctx, r.TaskID); err != nil || d.Worker != "" {
					t.Errorf("tasks show of a refused result: worker %q (%v); want none", d.Worker, err)
				}
				return
			}
			if d, err := eng.Task(ctx, r.TaskID); err != nil || d.Worker != "honest:1" {
				t.Errorf("tasks show of a signed result: worker %q (%v); want the signed honest:1", d.Worker, err)
			}
			if r.Status != dispatch.StatusDone || r.Usage != (model.Usage{Input: 10, Output: 5}) || r.Attempts != 1 || r.Worker != "honest:1" {
				t.Errorf("a signed result: %s (%s), usage %+v, attempts %d, worker %q; want done with the signed figures, worker honest:1", r.Status, r.Error, r.Usage, r.Attempts, r.Worker)
			}
			if r.Patch != "" {
				t.Errorf("patch %q: the completer's word on a landing that never happened", r.Patch)
			}
			if r.RanMS < ran.Milliseconds() || r.QueuedMS >= r.RanMS {
				t.Errorf("queued %d ms, ran %d ms; want the server's split (ran at least %d ms), not the result's Started (its end)", r.QueuedMS, r.RanMS, ran.Milliseconds())
			}
		})
	}
	// A plan's call: its record's split is the execution history's too.
	t.Run("a plan's call", func(t *testing.T) {
		alter = func(*temporal.CallOutput) {}
		eng, _ := trustingEngine(t, q, submitterRepo(t), store, fleetWorkerPub())
		plan := &wf.Plan{Name: "one", Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{{Agent: "explore", Prompt: "look"}}}}}
		res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Phases[0].Calls[0]
		if c.Status != wf.CallDone || c.RanMS < ran.Milliseconds() || c.QueuedMS >= c.RanMS {
			t.Errorf("the plan's call: %s (%s), queued %d ms, ran %d ms; want done with the server's split (ran at least %d ms), not the result's Started", c.Status, c.Error, c.QueuedMS, c.RanMS, ran.Milliseconds())
		}
	})
}
