package temporal_test

// Review 17 X1 for single calls: brood tasks resume took a call's agent
// and snapshot from its latest workflow run's memo and output, whoever
// started that run.

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// standInCall is the stand-in's call workflow: it ends at once with a
// cancelled call of the task, naming its transcript nowhere.
func standInCall(_ workflow.Context, in temporal.CallInputW) (*temporal.CallOutput, error) {
	id := in.Spec.TaskID
	return &temporal.CallOutput{Result: call.Result{TaskID: id, Agent: in.Spec.Agent, Status: dispatch.StatusCancelled}, Last: &temporal.Heartbeat{TaskID: id}}, nil
}

// TestCallResumeTakesOnlyWhatThisKeySigned: a stand-in that reaches the
// frontend (no key) starts workflow brood-call-TASK on a queue its own SDK
// worker polls, unsigned or carrying a submission this key signed for
// another task, naming the agent it wants in its memo. The user's brood
// tasks resume TASK is refused in one line, and the fleet's honest worker
// runs nothing.
func TestCallResumeTakesOnlyWhatThisKeySigned(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := sharedServer(t).Client(t)
	q := newQueue(t)
	blobs, err := blobstore.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, pub := newKey(t)
	trust := temporal.NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	p := startTrustingWorker(t, c, q, r17EchoScript, 1, blobs, trust)
	eng := temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond, Signer: key, Store: blobs,
		Limits: func(string) temporal.CallLimits { return testLimits }})

	standIn := q + "-stand-in"
	w := sdkworker.New(c, standIn, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(standInCall, workflow.RegisterOptions{Name: temporal.CallWorkflowName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	other := dispatch.NewID()
	otherSpec := call.Spec{Agent: "explore", Prompt: r17Evil, TaskID: other}
	signed, err := key.Sign(temporal.Submission{Kind: "call", Workflow: "brood-call-" + other, Queue: q, Spec: &otherSpec,
		Limits: map[string]temporal.CallLimits{"": testLimits}, At: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		signed *temporal.Signed
	}{
		{"unsigned", nil},
		{"another task's submission this key signed", signed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := dispatch.NewID()
			in := temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: r17Evil, TaskID: id}, Limits: testLimits, Queue: standIn, Signed: tc.signed}
			r, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + id, TaskQueue: standIn,
				Memo: map[string]any{"brood_agent": "explore", "brood_source": r17Evil}}, temporal.CallWorkflowName, in)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Get(ctx, nil); err != nil {
				t.Fatal(err)
			}
			before := p.ran()
			res, err := eng.Call(ctx, call.Spec{Resume: id, Prompt: "go on"})
			if err != nil {
				if !strings.Contains(err.Error(), "is not one this key started") || p.ran() > before {
					t.Fatalf("resume: %v, %d task(s) run; want refused as not this key's run, nothing run", err, p.ran()-before)
				}
				return
			}
			t.Errorf("RESUMED: the user's resume took the stand-in's run (%s, %d task(s) run on the honest worker: %q)", res.Status, p.ran()-before, res.Text)
		})
	}
}
