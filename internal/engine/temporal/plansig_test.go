package temporal_test

// Issue 26 (review21 P1-2): a plan run's tree lands only when a worker key
// the submitter trusts signed it for that very execution.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

const writerPlan = "name: p\nphases:\n  - id: w\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n"

// TestPlanLandsOnlyATipATrustedWorkerSigned: a real brood worker's plan
// run lands for a submitter that trusts its key; a stand-in that completes
// the plan's workflow with a tree of its making (the submitter's own plus
// a file of its choice, its objects in the store) — unsigned, signed by a
// key the submitter does not trust, or with a trusted key and a signature
// that is not over it — is not landed: the run's history does not replay
// with brood's workflow code (the stand-in scheduled none of its calls),
// so the run is refused whole, and so is its resume (takeTip's check of
// the tree stays, as defence in depth, on the replay's output).
func TestPlanLandsOnlyATipATrustedWorkerSigned(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	plan := enginetest.Plan(t, writerPlan)

	w := startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	dir := submitterRepo(t)
	eng, _ := trustingEngine(t, q, dir, store, fleetWorkerPub())
	res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != wf.RunDone || !strings.Contains(read(t, dir, "out.txt"), "dirty edit") {
		t.Fatalf("a trusted worker's run: %s (%s, landed %q); want done and landed", res.Status, res.Reason, res.Landed)
	}
	w.kill()

	// The stand-in: brood's plan workflow's name on the submitter's queue,
	// returning the submitter's run with a tip of its making.
	blobs, err := blobstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	dir = submitterRepo(t)
	write(t, dir, "evil.txt", "planted\n")
	forged, err := codesnap.Capture(ctx, blobs, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "evil.txt")); err != nil {
		t.Fatal(err)
	}
	_, strangerPub := newKey(t)
	stranger, _ := temporal.ParsePublicKey(strangerPub)
	trusted, _ := temporal.ParsePublicKey(fleetWorkerPub())
	var sig *temporal.TipSig
	sw := sdkworker.New(srv.Client(t), q, sdkworker.Options{})
	standIn := func(_ workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		in.Tip, in.TipSig = forged, sig
		return &temporal.RunOutput{Input: in, Result: &wf.Result{RunID: in.RunID, Plan: in.Plan.Name, Status: wf.RunDone,
			Outputs: map[string]any{"verdict": "IMPOSTOR: ship it"}}}, nil
	}
	sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	for _, tc := range []struct {
		name string
		sig  *temporal.TipSig
	}{
		{"unsigned", nil},
		{"an untrusted key", &temporal.TipSig{Key: stranger, Worker: "w", Run: "x", Sig: bytes.Repeat([]byte{1}, 64)}},
		{"a trusted key, not its signature", &temporal.TipSig{Key: trusted, Worker: "w", Run: "x", Sig: bytes.Repeat([]byte{1}, 64)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig = tc.sig
			eng, _ := trustingEngine(t, q, dir, store, fleetWorkerPub())
			id := wantReplayRefused(ctx, t, eng, engine.RunRequest{Plan: plan, Source: "plan.yaml"}, "")
			if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
				t.Fatal("the stand-in's tree landed in the submitter's tree")
			}
			// brood workflow resume of the ended run lands nothing of it
			// either: it is refused the same way.
			if _, err := eng.Resume(ctx, id, nil); err == nil || !strings.Contains(err.Error(), notReplayed) {
				t.Errorf("resume: %v; want it refused: its history %s", err, notReplayed)
			}
			if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
				t.Error("the resume landed the stand-in's tree")
			}
		})
	}
}

// TestPlanShowsOnlyCallResultsATrustedWorkerSigned: a stand-in that
// completes the plan's workflow with a done record of the call (its
// output of the stand-in's making), with no signed result behind it, or
// naming another run: its history does not replay with brood's workflow
// code, so nothing of it is taken or kept, under any run id
// (wantReplayRefused).
func TestPlanShowsOnlyCallResultsATrustedWorkerSigned(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	other := "01M94MCHZX2899N161ARWTC5TE"
	sw := sdkworker.New(srv.Client(t), q, sdkworker.Options{})
	standIn := func(_ workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		rec := wf.CallRecord{Key: "p/0", Agent: "explore", TaskID: "01M94MCGZB0000000MY0P6JN7H", Status: wf.CallDone, Output: "IMPOSTOR: ship it"}
		return &temporal.RunOutput{Input: in, Journal: []wf.JournalLine{{Type: "done", Key: rec.Key, TaskID: rec.TaskID, Rec: &rec}},
			Result: &wf.Result{RunID: other, Plan: in.Plan.Name, Status: wf.RunDone,
				Phases:  []wf.PhaseResult{{ID: "p", Shape: "parallel", Status: wf.PhaseDone, Calls: []wf.CallRecord{rec}, Output: []any{rec.Output}}},
				Outputs: map[string]any{"p": []any{rec.Output}}}}, nil
	}
	sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	root := t.TempDir()
	eng := temporal.New(temporal.Config{Client: srv.Client(t), Queue: q, Poll: 50 * time.Millisecond, ProjectRoot: root,
		Limits: func(string) temporal.CallLimits { return testLimits }, Workers: temporal.NewResultTrust(nil, "")})
	plan := enginetest.Plan(t, "name: p\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"x\"}]\n")
	wantReplayRefused(ctx, t, eng, engine.RunRequest{Plan: plan, Source: "plan.yaml"}, root)
	if _, err := os.Stat(filepath.Join(root, ".brood", "workflows", other)); err == nil {
		t.Error("the stand-in's run id got a record in the project")
	}
}
