package temporal_test

// Issue 26, fleetverify 1: anyone who reaches the frontend can complete a
// call's activity with a result of their making; the submitter takes only
// a result a worker key it trusts signed for that very call.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkactivity "go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/testbrood"
)

// fleetWorkerPub is the public key of the test workers' shared key.
func fleetWorkerPub() string {
	k := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{testbrood.FleetSeed}, ed25519.SeedSize))
	return temporal.FormatPublicKey(k.Public().(ed25519.PublicKey), "")
}

// trustingEngine submits from dir on q, taking the results of the worker
// keys pubs.
func trustingEngine(t *testing.T, q, dir, store string, pubs ...string) (*temporal.Engine, string) {
	t.Helper()
	blobs, err := blobstore.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	trust := temporal.NewTrust()
	for _, p := range pubs {
		if err := trust.Add(p, "test"); err != nil {
			t.Fatal(err)
		}
	}
	state := t.TempDir()
	return temporal.New(temporal.Config{Client: sharedServer(t).Client(t), Queue: q, Poll: 50 * time.Millisecond,
		Limits:  func(string) temporal.CallLimits { return testLimits },
		Code:    &temporal.CodeConfig{Blobs: blobs, Dir: dir, StateDir: state},
		Workers: temporal.NewResultTrust(trust, "trusted_workers")}), state
}

// TestSubmitterTakesOnlyResultsATrustedWorkerSigned: a real brood worker's
// writer result lands for a submitter that trusts its key; the same
// worker's result is refused by a submitter that does not (failed, one
// line naming the key, the worker and the command to trust it, the change
// not applied but kept under the state dir); and a stand-in that polls the
// call's queue and completes its activity with a done result carrying that
// real patch — unsigned, or with a genuine signature of another call — is
// refused the same way, nothing landed.
func TestSubmitterTakesOnlyResultsATrustedWorkerSigned(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	w := startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	spec := call.Spec{Agent: "general-purpose", Prompt: "copy what you see", Description: "ship"}

	dir := submitterRepo(t)
	eng, _ := trustingEngine(t, q, dir, store, fleetWorkerPub())
	r, err := eng.Call(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != dispatch.StatusDone || !strings.Contains(read(t, dir, "out.txt"), "dirty edit") {
		t.Fatalf("a trusted worker's result: %s (%s); want done and landed", r.Status, r.Error)
	}
	genuine := r

	_, strangerPub := newKey(t)
	dir = submitterRepo(t)
	eng, state := trustingEngine(t, q, dir, store, strangerPub)
	r, err = eng.Call(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := temporal.ParsePublicKey(fleetWorkerPub())
	for _, want := range []string{temporal.Fingerprint(pub), "which you do not trust", "brood fleet trust-worker '" + fleetWorkerPub(), w.name,
		"compare that key with the one your fleet's worker printed at its start"} {
		if !strings.Contains(r.Error, want) {
			t.Errorf("an untrusted worker's result: error %q; want it to say %q", r.Error, want)
		}
	}
	if r.Status != dispatch.StatusFailed || strings.Contains(r.Text, "dirty edit") {
		t.Errorf("an untrusted worker's result: %s, text %q; want failed, its answer not shown", r.Status, r.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Error("an untrusted worker's change landed in the submitter's tree")
	}
	kept := filepath.Join(state, r.TaskID, r.TaskID+".refused.patch")
	if b, err := os.ReadFile(kept); err != nil || !strings.Contains(string(b), "out.txt") || !strings.Contains(r.Error, kept) {
		t.Errorf("the refused patch: %v, error %q; want it kept in %s and named", err, r.Error, kept)
	}

	// The stand-in: its own poller on the queue the submitter sends to,
	// with brood's own call workflow and an activity of its making.
	standIn := q + "-stand-in"
	sw := sdkworker.New(srv.Client(t), standIn, sdkworker.Options{})
	sw.RegisterWorkflowWithOptions(temporal.CallWorkflow, workflow.RegisterOptions{Name: temporal.CallWorkflowName})
	var replay *temporal.ResultSig
	var status, forgedTask string
	forged := func(ctx context.Context, in temporal.CallInput) (*temporal.CallOutput, error) {
		id := in.Spec.TaskID
		if forgedTask != "" {
			id = forgedTask
		}
		return &temporal.CallOutput{Result: call.Result{TaskID: id, Agent: in.Spec.Agent, Status: status, Summary: "all good", Text: "all good", Code: genuine.Code,
			FilesChanged: []string{"main.go"}, Output: []byte(`{"ok":"all good"}`)},
			Last: &temporal.Heartbeat{TaskID: id}, Sig: replay}, nil
	}
	sw.RegisterActivityWithOptions(forged, sdkactivity.RegisterOptions{Name: temporal.CallActivityName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	for _, tc := range []struct {
		name, status, task string
		sig                *temporal.ResultSig
		want               string
	}{
		{"unsigned", dispatch.StatusDone, "", nil, "signed by no brood worker"},
		{"unsigned, as an older worker's", dispatch.StatusDone, "", nil, "a brood worker older than this one signs nothing: upgrade it"},
		{"another call's signature", dispatch.StatusDone, "", genuineSig(t, eng, genuine.TaskID), "not what worker key"},
		{"unsigned, a status of its own", "Done", "", nil, "signed by no brood worker"},
		{"unsigned, no status", "", "", nil, "signed by no brood worker"},
		{"unsigned, failed", dispatch.StatusFailed, "", nil, ""},
		{"unsigned, another task's", dispatch.StatusDone, dispatch.NewID(), nil, "names task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replay, status, forgedTask = tc.sig, tc.status, tc.task
			dir := submitterRepo(t)
			eng, state := trustingEngine(t, standIn, dir, store, fleetWorkerPub())
			r, err := eng.Call(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != dispatch.StatusFailed || !strings.Contains(r.Error, tc.want) || strings.Contains(r.Text+r.Summary+string(r.Output), "all good") || len(r.FilesChanged) > 0 {
				t.Errorf("a forged result: %s, error %q, text %q; want failed saying %q, the forged answer not shown", r.Status, r.Error, r.Text, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
				t.Error("the stand-in's change landed in the submitter's tree")
			}
			if tc.task != "" && (r.TaskID == tc.task || strings.Contains(r.Error, "kept in "+filepath.Join(state, tc.task))) {
				t.Errorf("the refusal is the forged task's: %s, %q", r.TaskID, r.Error)
			}
			if _, err := os.Stat(filepath.Join(state, r.TaskID, r.TaskID+".refused.patch")); err != nil && tc.status == dispatch.StatusDone {
				t.Errorf("the refused patch is not kept: %v", err)
			}
		})
	}
}

// genuineSig is the worker's signature of task id's finished call, as its
// workflow returned it.
func genuineSig(t *testing.T, eng *temporal.Engine, id string) *temporal.ResultSig {
	t.Helper()
	var out temporal.CallOutput
	if err := sharedServer(t).Client(t).GetWorkflow(context.Background(), "brood-call-"+id, "").Get(context.Background(), &out); err != nil || out.Sig == nil {
		t.Fatalf("the genuine call's output: %v, signed %v", err, out.Sig != nil)
	}
	return out.Sig
}
