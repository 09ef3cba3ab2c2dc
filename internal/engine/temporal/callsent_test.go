package temporal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestKeylessCallTakesOnlyStartsThisCheckoutSent (review28 P2-1): a
// keyless submitter's call (a real worker that allows unsigned
// submissions answers it) is shown as done from the checkout that sent
// it; from another checkout, which kept no start of it, its status is
// said to be unverified. Then whoever reaches the frontend starts a new
// execution of the task's workflow with a brief of its own (BETA),
// which the worker answers: the submitting checkout's brood tasks show
// takes nothing of it (failed, one line naming what to do), and its
// brood tasks resume continues nothing of it; a follow-up from the other
// checkout says that the run it continues is unverified.
func TestKeylessCallTakesOnlyStartsThisCheckoutSent(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, swapScript, store, 1, "")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	eng, _ := trustingEngine(t, q, submitterRepo(t), store, fleetWorkerPub())
	r, err := eng.Call(ctx, call.Spec{Agent: "explore", Prompt: "ALPHA", Description: "look at ALPHA"})
	if err != nil || r.Status != dispatch.StatusDone || !strings.Contains(r.Text, "alpha-answer") {
		t.Fatalf("the user's call: %v, %+v; want done with the ALPHA answer", err, r)
	}
	task := r.TaskID
	d, err := eng.Task(ctx, task)
	if err != nil || d.Status != dispatch.StatusDone || d.Unverified != "" {
		t.Fatalf("tasks show from the submitting checkout: %v, %s, unverified %q; want done, verified", err, d.Status, d.Unverified)
	}
	other, _ := trustingEngine(t, q, submitterRepo(t), store, fleetWorkerPub())
	d, err = other.Task(ctx, task)
	if err != nil || !strings.Contains(d.Unverified, "unverified: this checkout keeps no record of sending a start of task "+task) || !strings.Contains(d.Unverified, "anyone who can start workflows in namespace") {
		t.Errorf("tasks show from another checkout: %v, unverified %q; want its status said to be unverified", err, d.Unverified)
	}

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + task, TaskQueue: q, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE},
		temporal.CallWorkflowName, temporal.CallInputW{Spec: call.Spec{Resume: task, Agent: "explore", Prompt: "BETA", Description: "look at BETA"}, Limits: testLimits, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const what = "was not started with an input this checkout sent"
	d, err = eng.Task(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tasks show after the forged start: %s, last failure %q, result %+v", d.Status, d.LastFailure, d.Result)
	if d.Status != "failed" || d.Result != nil || !strings.Contains(d.LastFailure, what) || strings.Contains(d.LastFailure, "\n") {
		t.Errorf("tasks show: %s, last failure %q, result %+v; want failed, nothing of the BETA run, one line saying it %s", d.Status, d.LastFailure, d.Result, what)
	}
	f, err := eng.Call(ctx, call.Spec{Resume: task, Prompt: "FOLLOW: anything else?"})
	if err == nil || !strings.Contains(err.Error(), what) {
		t.Errorf("tasks resume: %v, %+v; want it refused: %s", err, f, what)
	}
	// From the other checkout nothing can tell: the follow-up says so.
	f, err = other.Call(ctx, call.Spec{Resume: task, Prompt: "FOLLOW: anything else?"})
	if err != nil || !strings.Contains(f.Text, "[brood: the run this follow-up continues is unverified: this checkout keeps no record of sending a start of task "+task) {
		t.Errorf("tasks resume from another checkout: %v, %+v; want its text to say the run it continues is unverified", err, f)
	}
}

// memoForger is a completer of a call's workflow tasks that upserts,
// with brood's own memo upsert, the agent and brief it wants a
// follow-up to take.
type memoForger struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *memoForger) UpsertMemo(ctx workflow.Context, memo map[string]any) error {
	memo["brood_agent"], memo["brood_source"] = "general-purpose", "FORGED BRIEF"
	return o.Next.UpsertMemo(ctx, memo)
}

// TestKeylessFollowUpTakesTheStartsAgent (review28 P3-1): a stand-in that
// completes a keyless call's workflow tasks upserts the run's memo with
// another agent (a writer) and description, in brood's own memo upsert
// (the replay matches it by type). A follow-up (brood tasks resume with a
// prompt) is started with the agent and description of the start the
// replay took, never the memo's.
func TestKeylessFollowUpTakesTheStartsAgent(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, swapScript, store, 1, "")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	name := q + "-memo"
	standInCallOn(t, name, q, func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
		return &memoForger{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}}
	})
	eng, _ := trustingEngine(t, name, submitterRepo(t), store, fleetWorkerPub())
	r, err := eng.Call(ctx, call.Spec{Agent: "explore", Prompt: "ALPHA", Description: "look at ALPHA"})
	if err != nil || r.Status != dispatch.StatusDone {
		t.Fatalf("the user's call: %v, %+v; want done", err, r)
	}
	f, err := eng.Call(ctx, call.Spec{Resume: r.TaskID, Prompt: "FOLLOW: anything else?"})
	t.Logf("follow-up: %v, %+v", err, f)
	it := c.GetWorkflowHistory(ctx, "brood-call-"+r.TaskID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	ev, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	var in temporal.CallInputW
	if err := converterFromPayload(ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0], &in); err != nil {
		t.Fatal(err)
	}
	if in.Spec.Resume != r.TaskID || in.Spec.Agent != "explore" || in.Spec.Description != "look at ALPHA" {
		t.Errorf("the follow-up's start: task %s, agent %q, description %q; want task %s's own: explore, \"look at ALPHA\" (never the memo's)", in.Spec.Resume, in.Spec.Agent, in.Spec.Description, r.TaskID)
	}
}
