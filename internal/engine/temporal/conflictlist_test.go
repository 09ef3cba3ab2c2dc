package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

const conflictingWriters = `
agents:
  general-purpose:
    - cases:
        - if: "ONE"
          tools:
            - Write: {file_path: "c.txt", content: "one\n"}
      tools:
        - Write: {file_path: "c.txt", content: "two\n"}
    - say: "## What I did\nWrote c.txt.\n\n## Files changed\nc.txt"
`

// TestConflictedWriterNotInTipList: two parallel writers whose changes
// conflict, on brood's own plan workflow inside a stand-in that turns the
// conflicted writer's not-applied record back into done (what it
// writes of it is its own): the run's signed tip does not name that
// writer (its chain step left the tip as it was), so the submitter shows
// it not applied with its patch kept, exactly one writer done (review25
// P1-2).
func TestConflictedWriterNotInTipList(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, conflictingWriters, store, 2, writerSettings)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	standInQ := q + "-stand-in"
	sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{})
	standIn := func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		in.Queue = q
		out, err := temporal.PlanWorkflow(w, in)
		if out == nil || out.Result == nil {
			return out, err
		}
		for i := range out.Result.Phases {
			ph := &out.Result.Phases[i]
			for k := range ph.Calls {
				if c := &ph.Calls[k]; c.Status == wf.CallNotApplied {
					c.Status, c.Error, c.Landed = wf.CallDone, "", "in the run's tree: c.txt"
					if s, ok := out.Input.Results[c.TaskID]; ok {
						c.Output = s.Result.Output
					}
					if out.Input.Chained != nil {
						out.Input.Chained[c.TaskID] = "in the run's tree: c.txt"
					}
					ph.Status = wf.PhaseDone
				}
			}
		}
		out.Result.Status = wf.RunDone
		return out, err
	}
	sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	dir := submitterRepo(t)
	eng, state := trustingEngine(t, standInQ, dir, store, fleetWorkerPub())
	plan := enginetest.Plan(t, "name: p\nphases:\n  - id: a\n    parallel: [{agent: general-purpose, prompt: \"ONE\"}, {agent: general-purpose, prompt: \"TWO\"}]\n")
	res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, c := range res.Phases[0].Calls {
		t.Logf("call %s: %s, landed %q, %s", c.TaskID, c.Status, c.Landed, c.Error)
		switch c.Status {
		case wf.CallDone:
			done++
		case wf.CallNotApplied:
			if _, err := os.Stat(filepath.Join(state, res.RunID, c.TaskID+".patch")); err != nil {
				t.Errorf("the conflicted writer's patch is not kept for the user: %v", err)
			}
		default:
			t.Errorf("call %s of two conflicting writers: %s; want done or not applied", c.TaskID, c.Status)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, "c.txt"))
	if done != 1 {
		t.Errorf("two writers of c.txt in conflict: %d shown done (run %s, c.txt %q); want 1, the other not applied", done, res.Status, got)
	}
}
