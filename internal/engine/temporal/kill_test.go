package temporal_test

import (
	"context"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

func converterFromPayload(p *commonpb.Payload, v any) error {
	return converter.GetDefaultDataConverter().FromPayload(p, v)
}

// TestKillWorkerMidCall: kill -9 the worker running a call; the call
// resumes on the other worker from its heartbeat details (the same task,
// its transcript from the store), and the call that had finished does not
// run again.
func TestKillWorkerMidCall(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	a := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 2)
	b := startWorkerProc(t, srv.Addr, q, enginetest.Script, store, 2)
	eng := newEngine(c, q)
	p := enginetest.Plan(t, `
name: killed
phases:
  - id: quick
    parallel: [{agent: explore, prompt: "first one"}]
  - id: slow
    parallel: [{agent: explore, prompt: "wait forever"}]
`)
	ids := make(chan string, 1)
	type out struct {
		res *workflow.Result
		err error
	}
	done := make(chan out, 1)
	// The quick call's activity heartbeats with a transcript too while it
	// runs (on a loaded machine it runs long enough to upload one): only
	// once the run says the slow phase is running is the pending call with
	// a transcript the slow one.
	slowRunning := make(chan struct{})
	var once sync.Once
	events := func(e workflow.Event) {
		if e.Phase == "slow" && e.Running > 0 {
			once.Do(func() { close(slowRunning) })
		}
	}
	go func() {
		res, err := eng.Run(context.Background(), engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(id string) { ids <- id }, Events: events})
		done <- out{res, err}
	}()
	id := <-ids
	select {
	case <-slowRunning:
	case o := <-done:
		t.Fatalf("the run ended before its slow phase ran: %+v, %v", o.res, o.err)
	case <-time.After(2 * time.Minute):
		t.Fatalf("the slow phase did not start; pending: %+v", pending(t, c, id))
	}
	// The slow call runs, and its heartbeat names its transcript in the store.
	var first pendingCall
	waitFor(t, "the slow call's heartbeat with a transcript position", 60*time.Second, func() bool {
		for _, pc := range pending(t, c, id) {
			if !pc.HB.Transcript.IsZero() && pc.HB.Position > 0 {
				first = pc
				return true
			}
		}
		return false
	})
	victim, other := a, b
	if b.owns(first.Worker) {
		victim, other = b, a
	} else if !a.owns(first.Worker) {
		t.Fatalf("the call runs on %q, neither worker", first.Worker)
	}
	victim.kill()
	var o out
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the run did not finish after its worker was killed; pending: %+v", pending(t, c, id))
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.res
	if res.Status != workflow.RunDone || res.Agents != 2 {
		t.Fatalf("status %s, %d agents; want done with 2: %+v", res.Status, res.Agents, res.Phases)
	}
	slow := res.Phases[1].Calls[0]
	if slow.Output != "picked up again and finished" || slow.TaskID != first.HB.TaskID {
		t.Fatalf("slow call %+v; want it continued as task %s (picked up again and finished)", slow, first.HB.TaskID)
	}
	if !other.taskDirs()[slow.TaskID] || !victim.taskDirs()[slow.TaskID] {
		t.Fatalf("task %s should have run on the killed worker and continued on the other", slow.TaskID)
	}
	quick := res.Phases[0].Calls[0].TaskID
	if victim.taskDirs()[quick] == other.taskDirs()[quick] {
		t.Fatalf("the finished call %s ran on both workers (or neither)", quick)
	}
}
