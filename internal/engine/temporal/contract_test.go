package temporal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/workflow"
)

// TestTemporalEngineMeetsTheContract runs the engine contract against a
// real dev server, with one worker (its own repository) per engine.
func TestTemporalEngineMeetsTheContract(t *testing.T) {
	enginetest.Run(t, enginetest.Fixture{New: func(t *testing.T, script string) engine.Engine {
		srv := sharedServer(t)
		c := srv.Client(t)
		q := newQueue(t)
		store := &temporal.DirStore{Dir: t.TempDir()}
		startWorker(t, c, q, script, 4, store)
		return newEngineIn(c, q, t.TempDir())
	}})
}

// landScript's writer writes one.txt.
const landScript = `
agents:
  general-purpose:
    - tools:
        - Write: {file_path: "one.txt", content: "from the writer\n"}
    - say: "## What I did\nWrote one.txt.\n\n## Files changed\none.txt"
`

// TestAPlanWhoseChangeDoesNotLandFails is the engines' parity for a
// change that does not come back: the submitter writes one.txt while the
// run's writer writes it too, so the run's tree does not land. As on the
// local engine (its isolated writer's change does not apply), the writer
// is not-applied with null output, its phase and the run failed (exit 1),
// and the submitter's edit stands; show, list and the fleet's tasks say
// failed, from this project's kept result or, without one, from the
// repository's landing record; a checkout that has no record of the run
// is told it was submitted from another checkout, never that a resume
// lands it here (fleetqa3 P1-2). Its outputs are null as the local
// engine's (enginetest.NotAppliedYieldsNothing, which
// TestConflictingWriterYieldsNull asserts of the local engine).
func TestAPlanWhoseChangeDoesNotLandFails(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, landScript, store, 1, writerSettings)
	dir := submitterRepo(t)
	eng := landEngine(t, q, dir, store, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	plan := enginetest.Plan(t, "name: wr\nphases:\n  - id: write\n    parallel:\n      - {agent: general-purpose, prompt: \"write one\"}\n")
	res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml", Started: func(string) {
		write(t, dir, "one.txt", "submitter edit\n") // after the snapshot the run ships
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Phases[0].Calls[0]
	if res.Status != workflow.RunFailed || res.Phases[0].Status != workflow.PhaseFailed || c.Status != workflow.CallNotApplied || c.Output != nil {
		t.Fatalf("run %s (%s), phase %s, call %s output %v; want failed, failed, not-applied, null (landed %q)", res.Status, res.Reason, res.Phases[0].Status, c.Status, c.Output, res.Landed)
	}
	if enginetest.NotAppliedYieldsNothing(t, res) != 1 {
		t.Errorf("want one not-applied call checked")
	}
	if !strings.Contains(c.Error, "brood tasks show "+c.TaskID) || !strings.Contains(res.Landed, "not") {
		t.Errorf("call error %q, landed %q; want the task named and the landing's refusal", c.Error, res.Landed)
	}
	if got := read(t, dir, "one.txt"); got != "submitter edit\n" {
		t.Errorf("one.txt is %q; the submitter's edit must stand", got)
	}
	for _, e := range []*temporal.Engine{eng, landEngine(t, q, dir, store, "")} {
		info, err := e.Show(ctx, res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != workflow.RunFailed || info.Result == nil || info.Result.Status != workflow.RunFailed {
			t.Errorf("show: %s (%s); want failed", info.Status, info.Reason)
		}
	}
	runs, err := eng.List(ctx)
	if err != nil || len(runs) != 1 || runs[0].Status != workflow.RunFailed || runs[0].Done != 0 || runs[0].Failed != 1 {
		t.Errorf("list %+v (%v); want the run failed, 0 done, 1 failed", runs, err)
	}
	tasks, err := eng.Tasks(ctx)
	if err != nil || len(tasks) != 1 || tasks[0].Status != workflow.RunFailed {
		t.Errorf("tasks %+v (%v); want the plan failed", tasks, err)
	}
	// brood tasks show of the plan's call (its id as the run printed it,
	// or a prefix) and of the run.
	for _, qid := range []string{c.TaskID, c.TaskID[:12]} {
		d, err := eng.Task(ctx, qid)
		if err != nil || d.ID != c.TaskID || d.Kind != "plan call" || d.Status != workflow.CallNotApplied || d.Workflow != res.RunID || d.Result == nil {
			t.Errorf("task %s: %+v (%v); want the plan's call, not-applied, in run %s", qid, d, err, res.RunID)
		}
	}
	// brood tasks resume of the plan's call by a prefix: the whole id.
	if got := eng.ResumeID(ctx, c.TaskID[:12]); got != c.TaskID {
		t.Errorf("resume %s names %q; want the plan's call %s", c.TaskID[:12], got, c.TaskID)
	}
	if d, err := eng.Task(ctx, res.RunID); err != nil || d.Kind != "plan" || d.Status != workflow.RunFailed {
		t.Errorf("task %s (the run): %+v (%v); want the plan, failed", res.RunID, d, err)
	}
	other := landEngine(t, q, submitterRepo(t), store, "")
	info, err := other.Show(ctx, res.RunID)
	if err != nil || info.Origin == "" || strings.Contains(info.Reason, "lands it") {
		t.Errorf("show from another checkout: %+v (%v); want it named as the submitter's, never landed here (fleetqa3 P1-2)", info, err)
	}
}

// landEngine submits from dir, keeping results in root ("": nowhere).
func landEngine(t *testing.T, q, dir, store, root string) *temporal.Engine {
	t.Helper()
	blobs, err := blobstore.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return temporal.New(temporal.Config{Client: sharedServer(t).Client(t), Queue: q, Poll: 50 * time.Millisecond, ProjectRoot: root,
		Limits: func(string) temporal.CallLimits { return testLimits },
		Code:   &temporal.CodeConfig{Blobs: blobs, Dir: dir, StateDir: t.TempDir()}})
}
