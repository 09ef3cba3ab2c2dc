package temporal

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestSingleCallInputIsTheWorkflows: the input a submitter expects its
// single call's worker to have signed (singleCallInput) is, whatever the
// start carries (a tree, a continuation of the call, one of another
// task, a signed submission), the one brood's call workflow schedules
// its activity with: the submitter refuses every other (briefRefusal).
func TestSingleCallInputIsTheWorkflows(t *testing.T) {
	task := dispatch.NewID()
	tree := &codesnap.Snapshot{Tree: "t1"}
	hb := &Heartbeat{TaskID: task, Position: 42, Transcript: Ref{Key: "sha256/01", Size: 3}, Code: &codesnap.Result{Tree: "t2"}}
	for _, tc := range []struct {
		name string
		in   CallInputW
	}{
		{"plain", CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "look", TaskID: task}, Queue: "q"}},
		{"a tree and a continuation", CallInputW{Spec: call.Spec{Agent: "general-purpose", Prompt: "go on", Resume: task}, Queue: "q", Code: tree, From: hb,
			Versions: workflowChanges(), Signed: &Signed{Key: []byte("k"), Ref: &Ref{Key: "sha256/02", Size: 9}}}},
		{"another task's continuation", CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "x", TaskID: task}, Queue: "q", From: &Heartbeat{TaskID: dispatch.NewID()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute}) // a loaded machine
			env.SetTestTimeout(time.Minute)
			env.RegisterWorkflowWithOptions(CallWorkflow, workflow.RegisterOptions{Name: CallWorkflowName})
			var got *CallInput
			env.RegisterActivityWithOptions(func(_ context.Context, in CallInput) (*CallOutput, error) {
				got = &in
				return &CallOutput{Result: call.Result{TaskID: task, Status: dispatch.StatusDone}}, nil
			}, activity.RegisterOptions{Name: CallActivityName})
			env.ExecuteWorkflow(CallWorkflowName, tc.in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("the call's workflow scheduled no activity")
			}
			if want := singleCallInput(tc.in); callDigest(*got) != callDigest(want) {
				t.Errorf("the workflow scheduled %+v; the submitter expects %+v", *got, want)
			}
		})
	}
}

// TestBriefRefusal: a single call's result signed for the input its
// submitter sent is taken; one signed for another brief, number or plan
// key is refused in one line naming what differs; an unbound (pre-v3)
// signature is refused for a call whose submitter requires bound results,
// and taken for a call from before; an unsigned ending needs none.
func TestBriefRefusal(t *testing.T) {
	task := dispatch.NewID()
	start := CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "ALPHA", TaskID: task}, Queue: "q", Versions: workflowChanges()}
	own := bindOf(singleCallInput(start))
	forged := start
	forged.Spec.Prompt = "BETA"
	old := start
	old.Versions = nil
	sig := func(b callBind) *CallOutput {
		return &CallOutput{Result: call.Result{TaskID: task, Status: dispatch.StatusDone}, Sig: &ResultSig{Key: make([]byte, 32), Worker: "w:1", Call: b.Call, Seq: b.Seq, Brief: b.Brief}}
	}
	for _, tc := range []struct {
		name  string
		start CallInputW
		out   *CallOutput
		want  string // "": taken
	}{
		{"its own", start, sig(own), ""},
		{"another brief", start, sig(bindOf(singleCallInput(forged))), "its brief's digest is not the brief's this submitter sent"},
		{"another number", start, sig(callBind{Seq: 2, Brief: own.Brief}), "call number 2, where a single call has 1"},
		{"a plan's call", start, sig(callBind{Call: "a/0", Seq: 1, Brief: own.Brief}), `a plan's call "a/0"`},
		{"unbound, bound required", start, sig(callBind{}), "from before results named the input they answer"},
		{"unbound, a call from before", old, sig(callBind{}), ""},
		{"unsigned ending", start, &CallOutput{Result: call.Result{TaskID: task, Status: dispatch.StatusFailed}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := briefRefusal(task, tc.start, tc.out)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v; want it taken", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("got %v; want one line saying %q", err, tc.want)
			}
		})
	}
}

// TestHandOnRefusal (review28 P1-1): a single call's follow-up continues
// its last run's conversation only when its worker signed it for the
// input brood's call workflow made from the run's start (the brief's
// digest is in the heartbeat's signature, and a changed one does not
// verify); a conversation of another brief, or signed by a worker from
// before, is not handed on for a call whose submitter requires bound
// results, nor, for a call from before, one whose worker named another
// input; an unsigned one is left to the worker (which continues none).
func TestHandOnRefusal(t *testing.T) {
	task := dispatch.NewID()
	start := CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "ALPHA", TaskID: task}, Queue: "q", Versions: workflowChanges()}
	forged := start
	forged.Spec.Prompt = "BETA"
	old := start
	old.Versions = nil
	keys := NewWorkerKeys(seeded(1), nil)
	signed := func(in CallInputW) *Heartbeat {
		hb := &Heartbeat{TaskID: task, Transcript: Ref{Key: "sha256/01", Size: 3}, Position: 3}
		keys.sign(CallInfo{Namespace: "ns", Workflow: "brood-call-" + task, Run: "exec-1", Attempt: 1, Bind: bindOf(singleCallInput(in))}, hb)
		return hb
	}
	own := signed(start)
	if err := keys.check(CallInfo{Namespace: "ns", Workflow: "brood-call-" + task, Run: "exec-2", Attempt: 1}, *own, true); err != nil {
		t.Fatalf("its own conversation does not verify: %v", err)
	}
	tampered := *signed(forged)
	sig := *tampered.Signed
	sig.Brief = own.Signed.Brief
	tampered.Signed = &sig
	if keys.check(CallInfo{Namespace: "ns", Workflow: "brood-call-" + task, Run: "exec-2", Attempt: 1}, tampered, true) == nil {
		t.Error("a conversation whose signed brief was changed verifies")
	}
	before := signed(start)
	before.Signed.Brief = ""
	for _, tc := range []struct {
		name   string
		start  CallInputW
		hb     *Heartbeat
		handed bool
	}{
		{"its own", start, own, true},
		{"another brief's", start, signed(forged), false},
		{"a worker from before's", start, before, false},
		{"a call from before, signed by a worker from before", old, before, false},
		{"a call from before, its own, signed by a worker that names its input", old, signed(old), true},
		{"a call from before, another brief's, signed by a worker that names its input", old, signed(forged), false},
		{"unsigned", start, &Heartbeat{TaskID: task, Transcript: Ref{Key: "sha256/01", Size: 3}}, true},
		{"none", start, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := handOnRefusal(task, tc.start, tc.hb)
			if (why == "") != tc.handed || strings.Contains(why, "\n") {
				t.Errorf("handOnRefusal: %q; want handed on %v", why, tc.handed)
			}
		})
	}
}
