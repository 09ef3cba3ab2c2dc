package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestChainStepBeats (issue 26, a tester's P1-2; review16 F4): a chain
// step has the run's heartbeat timeout and beats while it works, from its
// start, so a worker that dies in it is noticed within that timeout and
// the step moves on, instead of waiting out its 30 minutes while every
// listing says the run is running. The step here is Activities.Chain
// itself, whose admission reads the signed submission from a store that
// answers only after the step outlasted its heartbeat timeout several
// times over: the test environment times it out unless it beats then.
func TestChainStepBeats(t *testing.T) {
	const hb = 2 * time.Second
	if ao := chainOptions("q", CallLimits{Heartbeat: hb}, "T"); ao.HeartbeatTimeout != hb || ao.StartToCloseTimeout < hb {
		t.Fatalf("chain options: heartbeat timeout %s, start-to-close %s; want %s and longer", ao.HeartbeatTimeout, ao.StartToCloseTimeout, hb)
	}
	dir := t.TempDir()
	if _, err := GenerateKey(dir, "test", false); err != nil {
		t.Fatal(err)
	}
	key, err := LoadSigner(filepath.Join(dir, PrivateKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	trust := NewTrust()
	if err := trust.Add(key.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	signed, err := key.Sign(Submission{Kind: "plan", Workflow: "w", Queue: "q", At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(signed.Payload)
	ref := Ref{Key: "sha256/" + hex.EncodeToString(sum[:1]) + "/" + hex.EncodeToString(sum[:]), Size: int64(len(signed.Payload)), SHA256: hex.EncodeToString(sum[:])}
	signed.Payload, signed.Ref, signed.RefSig = nil, &ref, key.SignRef(ref)

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute}) // a loaded machine
	env.SetTestTimeout(time.Minute)
	beats := 0
	enough := make(chan struct{})
	var once sync.Once
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) {
		if beats++; beats >= 4 { // four beats span more than a heartbeat timeout
			once.Do(func() { close(enough) })
		}
	})
	a := &Activities{Store: slowStore{enough}, Trust: trust}
	env.RegisterActivityWithOptions(a.Chain, activity.RegisterOptions{Name: ChainActivityName})
	env.ExecuteWorkflow(func(w workflow.Context) error {
		ao := chainOptions("q", CallLimits{Heartbeat: hb}, "T")
		ao.RetryPolicy.MaximumAttempts = 1
		return workflow.ExecuteActivity(workflow.WithActivityOptions(w, ao), ChainActivityName, ChainInput{TaskID: "T", Signed: signed}).Get(w, nil)
	})
	// The store's answer, after the beats: the step was alive until then.
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "the store answered late") {
		t.Fatalf("the chain step: %v; want it alive until the store answered", err)
	}
}

// slowStore answers every read with an error once its channel is closed
// (or, with another, once it waited long past the step's heartbeat timeout).
type slowStore struct{ until chan struct{} }

func (s slowStore) PutBytes(context.Context, []byte) (Ref, error) {
	return Ref{}, errors.New("read only")
}

func (s slowStore) ReadAll(ctx context.Context, _ Ref) ([]byte, error) {
	select {
	case <-s.until:
		return nil, errors.New("the store answered late")
	case <-time.After(20 * time.Second): // the test environment waits for a step it timed out
		return nil, errors.New("no beat came")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestChainFailureIsNotAConflict (issue 26, a tester's P1-1): a writer
// whose chain step failed (a worker that does not trust the submitter's
// key refused it) says why, never that its change conflicts with another
// call's; a conflict, and a writer its chain put in, keep their lines.
func TestChainFailureIsNotAConflict(t *testing.T) {
	refused := chainFailedPrefix + "activity error (type: brood.chain): the submission is signed by key SHA256:abc, which this worker does not trust" + chainFailedKept + "sha256/00"
	conflict := "not in the run's tree: it conflicts with what another call wrote there"
	for _, tc := range []struct {
		name, landed, status string
		want, wantNot        string
	}{
		{"refused for its key", refused, wf.CallNotApplied, "could not be put into the run's tree: activity error (type: brood.chain): the submission is signed by key SHA256:abc, which this worker does not trust); ", "conflicts"},
		{"a conflict", conflict, wf.CallNotApplied, "conflicts with what another call wrote there", "could not be put"},
		{"put in", "in the run's tree: f.txt", wf.CallDone, "", "could not be put"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := wf.CallRecord{TaskID: "T1", Status: tc.status}
			if tc.status == wf.CallNotApplied {
				c.Error = "its change was not applied to the tree (it conflicts with what another call wrote there); " + wf.KeptWithTask("T1")
			}
			landedWhy(&c, tc.landed)
			if !strings.Contains(c.Error, tc.want) || strings.Contains(c.Error, tc.wantNot) {
				t.Fatalf("error %q: want it to say %q and not %q", c.Error, tc.want, tc.wantNot)
			}
			if tc.status == wf.CallNotApplied && !strings.Contains(c.Error, wf.KeptWithTask("T1")) {
				t.Fatalf("error %q no longer says where the patch is kept", c.Error)
			}
		})
	}
}
