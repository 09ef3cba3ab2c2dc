package temporal_test

import (
	"context"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

// TestResumeCancelledCallOnAnotherWorker: a run cancelled while its call
// runs keeps the call's last heartbeat (its transcript in the store); after
// that worker is gone, `brood workflow resume` continues the call on the
// other worker from the transcript — the scripted agent answers the
// continuation, where a start from scratch would wait forever again.
func TestResumeCancelledCallOnAnotherWorker(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	a := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 1)
	b := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 1)
	eng := newEngine(c, q)
	p := enginetest.Plan(t, "name: stopped\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"wait forever\"}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := make(chan string, 1)
	done := make(chan *workflow.Result, 1)
	go func() {
		res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(id string) { ids <- id }})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	id := <-ids
	var first pendingCall
	waitFor(t, "the call's heartbeat with its transcript", 90*time.Second, func() bool {
		for _, pc := range pending(t, c, id) {
			if !pc.HB.Transcript.IsZero() && pc.HB.Position > 0 {
				first = pc
				return true
			}
		}
		return false
	})
	cancel()
	var res *workflow.Result
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the cancelled run did not end")
	}
	if res == nil || res.Status != workflow.RunCancelled {
		t.Fatalf("run %+v; want cancelled", res)
	}
	victim, other := a, b
	if b.owns(first.Worker) {
		victim, other = b, a
	}
	victim.kill()
	rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer rcancel()
	again, err := eng.Resume(rctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := again.Phases[0].Calls[0]
	if again.Status != workflow.RunDone || call.Output != "picked up again and finished" || call.TaskID != first.HB.TaskID {
		t.Fatalf("resumed run %s, call %+v; want task %s continued from its transcript", again.Status, call, first.HB.TaskID)
	}
	if !other.taskDirs()[call.TaskID] {
		t.Fatalf("task %s did not continue on the other worker", call.TaskID)
	}
}

// TestResumeCancelledSingleCallOnAnotherWorker: a single call (brood
// subagent --engine temporal) cancelled while it runs keeps its last
// heartbeat in its workflow's output; after that worker is gone, a resume
// of the task with a follow-up prompt (brood tasks resume) continues the
// conversation on the other worker from the transcript in the store — a
// start from scratch would wait forever again.
func TestResumeCancelledSingleCallOnAnotherWorker(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	a := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 1)
	b := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 1)
	eng := newEngine(c, q)
	id := dispatch.NewID()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		r   *call.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := eng.Call(ctx, call.Spec{Agent: "explore", Prompt: "wait forever", Description: "wait forever", TaskID: id})
		done <- out{r, err}
	}()
	var first pendingCall
	waitFor(t, "the call's heartbeat with its transcript", 90*time.Second, func() bool {
		for _, pc := range pending(t, c, "brood-call-"+id) {
			if !pc.HB.Transcript.IsZero() && pc.HB.Position > 0 {
				first = pc
				return true
			}
		}
		return false
	})
	cancel()
	var o out
	select {
	case o = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the cancelled call did not end")
	}
	if o.err != nil || o.r.Status != dispatch.StatusCancelled {
		t.Fatalf("cancelled call: %+v, %v; want cancelled", o.r, o.err)
	}
	victim, other := a, b
	if b.owns(first.Worker) {
		victim, other = b, a
	}
	victim.kill()
	rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer rcancel()
	r, err := eng.Call(rctx, call.Spec{Resume: id, Prompt: "you were interrupted: finish now"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != dispatch.StatusDone || r.Summary != "picked up again and finished" || r.TaskID != id {
		t.Fatalf("resumed call %+v; want task %s continued from its transcript", r, id)
	}
	if !other.taskDirs()[id] {
		t.Fatalf("task %s did not continue on the other worker", id)
	}
	d, err := eng.Task(rctx, id)
	if err != nil || d.Result == nil || d.Result.Status != dispatch.StatusDone {
		t.Fatalf("brood tasks show of the resumed call: %+v, %v; want its latest workflow, done", d, err)
	}
}
