package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

const originPlan = `name: one-writer
phases:
  - id: w
    parallel:
      - {agent: general-purpose, prompt: "copy what you see"}
`

// TestAnotherCheckoutNeverLandsTheRun (fleetqa3 P1-2): a run and a call
// submitted from checkout A are listed in checkout B as A's, never said to
// be missing from B's tree, and B's resume (of the run, or a call's
// land-only resume) refuses to land them there, naming A.
func TestAnotherCheckoutNeverLandsTheRun(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, codeScript, store, 2, writerSettings)
	dirA, dirB := submitterRepo(t), submitterRepo(t)
	realA, err := filepath.EvalSymlinks(dirA)
	if err != nil {
		t.Fatal(err)
	}
	a, b := codeEngine(t, q, dirA, store), codeEngine(t, q, dirB, store)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := a.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, originPlan), Source: "plan.yaml"})
	if err != nil || res.Status != workflow.RunDone {
		t.Fatalf("run from A: %v, %+v", err, res)
	}
	read(t, dirA, "out.txt")

	info, err := b.Show(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Origin, realA) || strings.Contains(info.Reason, "not in your tree") || !strings.Contains(info.Reason, "submitted from "+realA) {
		t.Errorf("show in B: origin %q, reason %q; want A named, never 'not in your tree'", info.Origin, info.Reason)
	}
	runs, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.RunID == res.RunID && !strings.Contains(r.Origin, realA) {
			t.Errorf("list in B: origin %q; want %s", r.Origin, realA)
		}
	}
	if _, err := b.Resume(ctx, res.RunID, nil); err == nil || !strings.Contains(err.Error(), realA) || !strings.Contains(err.Error(), "brood workflow resume "+res.RunID) {
		t.Errorf("resume in B: %v; want a refusal naming %s", err, realA)
	}
	if mine, err := a.Show(ctx, res.RunID); err != nil || mine.Origin != "" {
		t.Errorf("show in A: %+v, %v; want no origin (its own)", mine, err)
	}
	if _, err := a.Resume(ctx, res.RunID, nil); err != nil {
		t.Errorf("resume in A: %v", err)
	}

	r, err := a.Call(ctx, call.Spec{Agent: "general-purpose", Prompt: "copy what you see", Description: "ship"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := b.Task(ctx, r.TaskID); err != nil || !strings.Contains(d.Landed, "submitted from "+realA) {
		t.Errorf("tasks show of A's call in B: %+v, %v; want it named as A's", d, err)
	}
	if _, err := b.LandCall(ctx, r.TaskID); err == nil || !strings.Contains(err.Error(), realA) {
		t.Errorf("land-only resume of A's call in B: %v; want a refusal naming %s", err, realA)
	}
	if _, err := b.Call(ctx, call.Spec{Resume: r.TaskID, Prompt: "go on"}); err == nil || !strings.Contains(err.Error(), realA) {
		t.Errorf("resume of A's call in B: %v; want a refusal naming %s", err, realA)
	}
	if _, err := os.Stat(filepath.Join(dirB, "out.txt")); err == nil {
		t.Error("A's change landed in checkout B")
	}
}
