package temporal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

type callOut struct {
	r   *call.Result
	err error
}

// TestKilledWorkerNeverAsksAFinishedTurnAgain: a worker is killed (SIGKILL)
// while its call's child waits for the model — in the first request, after
// the first tool turn, in the last turn — and the call finishes on the
// other worker. The loopback model saw every finished turn asked once: the
// retry continued from the transcript as it was at the last turn boundary
// (durable there before the next request), whatever the moment.
func TestKilledWorkerNeverAsksAFinishedTurnAgain(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	start := func() *workerProc {
		return startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...)
	}
	workers := []*workerProc{start(), start()}
	eng := newEngine(c, q)
	for _, tc := range []struct {
		name string
		at   int // the turn asked when the worker dies
	}{
		{"during the first request", 0},
		{"between turns", 1},
		{"during the last turn", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desc := "fault at turn " + string(rune('0'+tc.at))
			k := turnKey{desc, tc.at}
			m.hold(k)
			id := dispatch.NewID()
			done := make(chan callOut, 1)
			go func() {
				r, err := eng.Call(context.Background(), call.Spec{TaskID: id, Agent: "explore", Prompt: "count the files", Description: desc})
				done <- callOut{r, err}
			}()
			select {
			case <-m.arrivedAt(k):
			case o := <-done:
				t.Fatalf("the call ended before turn %d was asked: %+v, %v", tc.at, o.r, o.err)
			case <-time.After(2 * time.Minute):
				t.Fatalf("turn %d of the call was never asked", tc.at)
			}
			victim := -1
			for i, w := range workers {
				if w.taskDirs()[id] {
					victim = i
				}
			}
			if victim < 0 {
				t.Fatalf("task %s is on neither worker", id)
			}
			workers[victim].kill()
			m.release(k)
			var o callOut
			select {
			case o = <-done:
			case <-time.After(3 * time.Minute):
				t.Fatalf("the call did not finish after its worker was killed")
			}
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.r.Status != dispatch.StatusDone || !strings.Contains(o.r.Summary, "finished after 2 tool turns") || o.r.TaskID != id {
				t.Fatalf("result %+v; want task %s done with the model's last answer", o.r, id)
			}
			m.checkAskedOnce(t, desc, tc.at)
			workers[victim] = start()
		})
	}
}
