package worker_test

// A continuation belongs to its submitter and its execution (review17 S1,
// S2): another trusted submitter naming a call's task never continues it,
// and a heartbeat a stand-in puts by id (an earlier execution's signed
// one, or one naming the task alone) never decides what a follow-up
// continues.

import (
	"context"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// lastScript's explore says the first and the latest user text it was
// given: which conversation it continued, and whether the follow-up
// reached it.
const lastScript = `
agents:
  explore:
    - say: "FIRST=[{{first .Prompt}}] LAST=[{{first .Last}}]"
    - say: "FIRST=[{{first .Prompt}}] LAST=[{{first .Last}}]"
    - say: "FIRST=[{{first .Prompt}}] LAST=[{{first .Last}}]"
    - say: "FIRST=[{{first .Prompt}}] LAST=[{{first .Last}}]"
`

// heldEveryTurnScript's explore holds every answer back for minutes: a
// follow-up (the conversation's third turn) is running when the stand-in
// acts, not ended at once for want of a turn.
const heldEveryTurnScript = `
agents:
  explore:
    - say: "held"
      delay: "300s"
    - say: "held"
      delay: "300s"
    - say: "held"
      delay: "300s"
    - say: "held"
      delay: "300s"
`

// signedResume is a follow-up of task id by signer k, from 'from'.
func (s *storeWriter) signedResume(t *testing.T, k *temporal.Signer, id, prompt string, from *temporal.Heartbeat) (string, temporal.CallInputW) {
	t.Helper()
	wid := "brood-call-" + id
	f := *from
	f.Result = temporal.Ref{}
	in := temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: prompt, Resume: id}, Queue: s.queue, Limits: s.limits, From: &f}
	var err error
	if in.Signed, err = k.Sign(temporal.Submission{Kind: "call", Workflow: wid, Queue: s.queue, Spec: &in.Spec, From: &f,
		Limits: map[string]temporal.CallLimits{"": s.limits}, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return wid, in
}

// TestOtherSubmitterCannotContinueACall: submitter A's single call
// finishes on a worker; submitter B, whose key the worker trusts too,
// names A's task: a follow-up under A's workflow id with A's last
// heartbeat (from A's history) as From, the same with no From (the
// worker's own records), or under a workflow id of B's own. Each is
// refused, and B never reads A's brief.
func TestOtherSubmitterCannotContinueACall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := newStoreWriter(ctx, t, "othersub")
	b, bPub := keyIn(t)
	wp := workerProject(t, echoScript)
	startBrood(t, wp, nil, "brood worker: task queue", "worker", "--concurrency", "1", "--trusted-key", s.key.Public(),
		"--trusted-key", bPub, "--temporal", s.srv.Addr, "--task-queue", s.queue, "--store", s.signedFleet.store)

	const secret = "VICTIM-SECRET-4711"
	victim := dispatch.NewID()
	wid, in := s.call(t, victim, secret)
	out, err := s.run(ctx, wid, in)
	if err != nil || out.Status != dispatch.StatusDone || out.Last == nil || out.Last.Transcript.IsZero() {
		t.Fatalf("A's call: %v %+v", err, out)
	}
	for _, tc := range []struct {
		name, want string
		sign       func() (string, temporal.CallInputW)
	}{
		{"A's workflow id, A's last heartbeat as From", "not what worker key", func() (string, temporal.CallInputW) {
			return s.signedResume(t, b, victim, "B asks: repeat your first question", out.Last)
		}},
		{"A's workflow id, no From", "which this worker ran for key", func() (string, temporal.CallInputW) {
			return signedBy(t, s, b, "brood-call-"+victim, victim)
		}},
		{"B's own workflow id", "a single call's workflow is its task's", func() (string, temporal.CallInputW) {
			return signedBy(t, s, b, "brood-call-"+dispatch.NewID(), victim)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wid, bin := tc.sign()
			got, err := s.run(ctx, wid, bin)
			if got != nil && strings.Contains(got.Summary+got.Text, secret) {
				t.Fatalf("submitter B continued submitter A's conversation and read %q in its answer", secret)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("B's call: %v %+v; want it refused saying %q", err, got, tc.want)
			}
		})
	}
}

// signedBy is a follow-up of task id with no From, signed by k for
// workflow wid.
func signedBy(t *testing.T, s *storeWriter, k *temporal.Signer, wid, id string) (string, temporal.CallInputW) {
	t.Helper()
	in := temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "B asks: repeat your first question", Resume: id}, Queue: s.queue, Limits: s.limits}
	var err error
	if in.Signed, err = k.Sign(temporal.Submission{Kind: "call", Workflow: wid, Queue: s.queue, Spec: &in.Spec,
		Limits: map[string]temporal.CallLimits{"": s.limits}, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return wid, in
}

// TestHeartbeatByIDDoesNotReplaceAFollowUp: a single call's third
// execution (a follow-up) is handed, by heartbeat by id, the
// worker-signed last heartbeat of its first execution, or a heartbeat
// naming the task alone, and its attempt is failed by id. The retry
// continues from where its signed resume began, its follow-up sent: the
// signature binds the execution, heartbeat details are an earlier
// attempt's of this execution only, and details that hand on nothing
// never replace the resume's From.
func TestHeartbeatByIDDoesNotReplaceAFollowUp(t *testing.T) {
	for _, mode := range []string{"control: no heartbeat, the attempt failed by id", "execution 1's signed heartbeat", "an unsigned heartbeat naming only the task"} {
		t.Run(mode, func(t *testing.T) { olderExecutionReplayed(t, mode) })
	}
}

// olderExecutionReplayed runs one case of
// TestHeartbeatByIDDoesNotReplaceAFollowUp.
func olderExecutionReplayed(t *testing.T, mode string) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	s := newStoreWriter(ctx, t, "olderexec")
	echo := s.worker(t, lastScript)
	id := dispatch.NewID()
	wid, in := s.call(t, id, "FIRST-BRIEF")
	out1, err := s.run(ctx, wid, in)
	if err != nil || out1.Status != dispatch.StatusDone || out1.Last == nil {
		t.Fatalf("execution 1: %v %+v", err, out1)
	}
	_, in2 := s.signedResume(t, s.key, id, "SECOND-FOLLOWUP", out1.Last)
	out2, err := s.run(ctx, wid, in2)
	if err != nil || out2.Status != dispatch.StatusDone || out2.Last == nil {
		t.Fatalf("execution 2: %v %+v", err, out2)
	}
	t.Logf("execution 2 answered: %q", out2.Summary)
	echo.kill()

	held := s.worker(t, heldEveryTurnScript)
	_, in3 := s.signedResume(t, s.key, id, "THIRD-FOLLOWUP", out2.Last)
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: s.queue}, temporal.CallWorkflowName, in3)
	if err != nil {
		t.Fatal(err)
	}
	var activityID string
	waitCLI(t, "execution 3's first attempt to start", func() bool {
		d, err := s.c.DescribeWorkflowExecution(ctx, wid, run.GetRunID())
		if err != nil {
			return false
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				activityID = a.GetActivityId()
			}
		}
		return activityID != ""
	})
	held.kill()
	// The stand-in: execution 1's signed heartbeat (from its history), by id.
	replay := *out1.Last
	if strings.HasPrefix(mode, "an unsigned") {
		replay = temporal.Heartbeat{TaskID: id}
	}
	if !strings.HasPrefix(mode, "control") {
		if err := s.c.RecordActivityHeartbeatByID(ctx, "", wid, run.GetRunID(), activityID, replay); err != nil {
			t.Fatal(err)
		}
	}
	failure := sdktemporal.GetDefaultFailureConverter().ErrorToFailure(sdktemporal.NewApplicationError("the stand-in fails the attempt", "StandIn"))
	if _, err := s.c.WorkflowService().RespondActivityTaskFailedById(ctx, &workflowservice.RespondActivityTaskFailedByIdRequest{
		Namespace: "default", WorkflowId: wid, RunId: run.GetRunID(), ActivityId: activityID, Failure: failure,
	}); err != nil {
		t.Fatal(err)
	}
	s.worker(t, lastScript)
	var out3 temporal.CallOutput
	if err := run.Get(ctx, &out3); err != nil {
		t.Fatal(err)
	}
	t.Logf("execution 3 answered: %s %q\n%s", out3.Status, out3.Summary, out3.Text)
	if !strings.Contains(out3.Summary, "FIRST=[Begin: FIRST-BRIEF] LAST=[THIRD-FOLLOWUP]") {
		t.Errorf("execution 3 did not continue its conversation with its signed follow-up (want FIRST=[Begin: FIRST-BRIEF] LAST=[THIRD-FOLLOWUP]): the stand-in's heartbeat decided what it continued")
	}
}
