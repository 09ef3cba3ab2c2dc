package temporal_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	brt "github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestRetryHeartbeatKeepsTheContinuation: an attempt that continues a call
// (its heartbeat details name a transcript and a partial change) keeps
// naming them in its own heartbeats until it has uploaded a transcript of
// its own. A first beat with no reference would replace the details on the
// server: had this worker died then, the next attempt would have started
// the call over, its transcript and partial patch lost.
func TestRetryHeartbeatKeepsTheContinuation(t *testing.T) {
	store := &brt.DirStore{Dir: t.TempDir()}
	id := dispatch.NewID()
	patch, _ := store.PutBytes(context.Background(), []byte("a partial patch"))
	code := &codesnap.Result{Tree: strings.Repeat("ab", 20), Patch: &patch, Files: []string{"half.txt"}}
	transcript := []byte(`{"type":"message"}` + "\n")
	ref, _ := store.PutBytes(context.Background(), brt.TranscriptObjectWith(id, code, transcript))
	from := brt.Heartbeat{TaskID: id, Worker: "dead", Transcript: ref, Position: int64(len(transcript)), Code: code}
	beats := make(chan brt.Heartbeat, 16)
	// The runner stands in for a child that prints a line before its task
	// directory holds a transcript (a slow start on a loaded worker): the
	// beat that line causes is what the server would record.
	a := &brt.Activities{Store: store, ProjectRoot: t.TempDir(), Worker: "here", Runner: runnerFunc(func(ctx context.Context, s call.Spec) (*call.Result, error) {
		s.Watch.Alive()
		select {
		case hb := <-beats:
			beats <- hb
		case <-time.After(time.Minute):
			t.Error("no heartbeat reached the server after the child's first line")
		}
		return &call.Result{TaskID: s.TaskID, Status: dispatch.StatusDone, Summary: "continued"}, nil
	})}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
	env.SetHeartbeatDetails(from)
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var hb brt.Heartbeat
		if d.HasValues() && d.Get(&hb) == nil {
			select {
			case beats <- hb:
			default:
			}
		}
	})
	if _, err := env.ExecuteActivity(brt.CallActivityName, brt.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "brief", TaskID: id}}); err != nil {
		t.Fatal(err)
	}
	hb := <-beats
	if hb.TaskID != id || hb.Transcript != ref || hb.Position != from.Position || hb.Code == nil || hb.Code.Patch == nil || *hb.Code.Patch != patch {
		t.Fatalf("first heartbeat of the continuing attempt %+v; want it to name task %s's transcript %v and partial change", hb, id, ref)
	}
	if hb.Worker != "here" {
		t.Errorf("heartbeat names worker %q; want this one", hb.Worker)
	}
}

// TestAttemptBeatsUntilTheChildSpeaks: between the copy and the child's
// first line (the call's set-up, the child's start: a mount and a re-exec
// under Landlock, seconds on a loaded worker) the attempt heartbeats by
// itself, so a slow start is not taken for a dead worker. The runner here
// lets its "child" speak only once a heartbeat reached the server.
func TestAttemptBeatsUntilTheChildSpeaks(t *testing.T) {
	beats := make(chan struct{}, 64)
	a := &brt.Activities{Store: &brt.DirStore{Dir: t.TempDir()}, ProjectRoot: t.TempDir(), Runner: runnerFunc(func(ctx context.Context, s call.Spec) (*call.Result, error) {
		select {
		case <-beats:
		case <-ctx.Done():
			return nil, errors.New("the attempt timed out before its child spoke: no heartbeat meanwhile")
		case <-time.After(20 * time.Second):
			return nil, errors.New("no heartbeat while the child had not started")
		}
		s.Watch.Alive()
		return &call.Result{TaskID: s.TaskID, Status: dispatch.StatusDone, Summary: "started late"}, nil
	})}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute) // a loaded machine: the heartbeat timeout is what must not fire
	env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
	env.RegisterWorkflowWithOptions(func(w workflow.Context, in brt.CallInput) (*call.Result, error) {
		w = workflow.WithActivityOptions(w, workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: 3 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		var r call.Result
		err := workflow.ExecuteActivity(w, brt.CallActivityName, in).Get(w, &r)
		return &r, err
	}, workflow.RegisterOptions{Name: "slow-start"})
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) {
		select {
		case beats <- struct{}{}:
		default:
		}
	})
	env.ExecuteWorkflow("slow-start", brt.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "brief", TaskID: dispatch.NewID()}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var r call.Result
	if err := env.GetWorkflowResult(&r); err != nil || r.Summary != "started late" {
		t.Fatalf("result %+v, %v", r, err)
	}
}

// TestRetryWithNoDetailsContinuesItsTask: an attempt that died before its
// first heartbeat (a call shorter than the heartbeat interval sends none
// before its first answer) leaves the retry no details; on a worker that
// has the task's records (the same one, back) the retry continues that
// task from them, and never starts it over under an id that is taken.
func TestRetryWithNoDetailsContinuesItsTask(t *testing.T) {
	root := t.TempDir()
	id := dispatch.NewID()
	var seen []call.Spec
	a := &brt.Activities{Store: &brt.DirStore{Dir: t.TempDir()}, ProjectRoot: root, Runner: runnerFunc(func(_ context.Context, s call.Spec) (*call.Result, error) {
		seen = append(seen, s)
		if len(seen) == 1 {
			td, err := taskdir.Open(root).Task(s.TaskID)
			if err == nil {
				err = td.Create()
			}
			if err == nil {
				err = td.WriteJSON(taskdir.Envelope, map[string]string{"task_id": s.TaskID}, false)
			}
			if err != nil {
				return nil, err
			}
			panic("the worker dies with its first attempt")
		}
		return &call.Result{TaskID: id, Status: dispatch.StatusDone, Summary: "continued"}, nil
	})}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The test environment runs activities in the workflow's goroutine:
	// two attempts on a loaded machine may take more than the default 1s.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
	env.RegisterWorkflowWithOptions(func(w workflow.Context, in brt.CallInput) (*call.Result, error) {
		w = workflow.WithActivityOptions(w, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2}})
		var r call.Result
		err := workflow.ExecuteActivity(w, brt.CallActivityName, in).Get(w, &r)
		return &r, err
	}, workflow.RegisterOptions{Name: "retried"})
	env.ExecuteWorkflow("retried", brt.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "brief", TaskID: id}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1].Resume != id || !seen[1].Continue || seen[1].TaskID != "" {
		t.Fatalf("specs %+v; want the second attempt to continue task %s from its records", seen, id)
	}
}
