package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	"github.com/broodhq/brood/internal/workflow"
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
	sub := testbrood.NewProject(t, mainEnv, nil)
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
			// Every attempt's finished turns are counted, and both
			// attempts (the killed one and the one that finished).
			if want := 3 * turnUsage.Input; o.r.Usage.Input != want || o.r.Usage.Output != 3*turnUsage.Output {
				t.Errorf("usage %+v; want the three finished turns' (%d in), whichever attempt had them", o.r.Usage, want)
			}
			if o.r.Attempts != 2 {
				t.Errorf("attempts %d; want 2 (the killed worker's and the other's)", o.r.Attempts)
			}
			// brood tasks show: the worker that finished it, both attempts.
			td, err := eng.Task(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if !workers[1-victim].owns(td.Worker) || td.Attempt != 2 || td.Result == nil || td.Result.Attempts != 2 {
				t.Errorf("tasks show: worker %q attempt %d result %+v; want the other worker (%s), 2 attempts", td.Worker, td.Attempt, td.Result, workers[1-victim].name)
			}
			// And from the command line, by a prefix of the id.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			code, out, errs := sub.Brood(ctx, nil, "tasks", "show", id[:20], "--temporal", srv.Addr, "--task-queue", q)
			if want := workers[1-victim].name + " (ran it; 2 attempt(s) on the fleet)"; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "2 attempt(s) on the fleet, 300 tokens in, 30 out over them all") {
				t.Errorf("brood tasks show: exit %d, want %q and the usage of 3 turns in\n%s\n%s", code, want, out, errs)
			}
			workers[victim] = start()
		})
	}
}

// answeredIn is how many calls' children got their final answer (it is
// in their transcript) in a worker's repository.
func answeredIn(w *workerProc) int {
	n := 0
	for id := range w.taskDirs() {
		b, err := os.ReadFile(filepath.Join(w.p.root, ".brood", "dispatch", id, dispatch.SessionFile))
		if err == nil && strings.Contains(string(b), "finished after") {
			n++
		}
	}
	return n
}

// outage is how long the server stays down once a call got its final
// answer in it: longer than the SDK retries reporting a completion (10s).
const outage = 15 * time.Second

// TestServerRestartNeverRerunsAFinishedCall: the dev server (its state in
// a file) is killed while two calls of a plan's second phase wait for the
// model: one for its last answer, one in the middle of its turns. The
// first gets its final answer while the server is down (it waits, the
// answer in its transcript, until the server has the heartbeat that names
// it, then ends); the server comes back after the outage and the second
// gets its answer then. Neither is run again nor asks a turn twice: the
// first's answer and result were recorded on the server before anything
// acted on them, and the second went on in the same attempt
// (heartbeats that time out while the server is away do not stop it). Nor
// does the call that finished before the restart.
func TestServerRestartNeverRerunsAFinishedCall(t *testing.T) {
	srv := devserver.Start(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	w := startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 2, "", m.env()...)
	// The production lifeguard (60s): a restart is not a dead worker.
	limits := testLimits
	limits.Heartbeat = time.Minute
	eng := temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond, Limits: func(string) temporal.CallLimits { return limits }})
	p := enginetest.Plan(t, `
name: restarted
phases:
  - id: before
    parallel: [{agent: explore, prompt: "before"}]
  - id: across
    parallel: [{agent: explore, prompt: "across"}, {agent: explore, prompt: "mid-turn"}]
  - id: after
    parallel: [{agent: explore, prompt: "after"}]
`)
	last, mid := turnKey{"restarted: across", 2}, turnKey{"restarted: mid-turn", 1}
	m.hold(last)
	m.hold(mid)
	done := make(chan error, 1)
	var res *workflow.Result
	go func() {
		var err error
		res, err = eng.Run(context.Background(), engine.RunRequest{Plan: p, Source: "plan.yaml"})
		done <- err
	}()
	for _, k := range []turnKey{last, mid} {
		select {
		case <-m.arrivedAt(k):
		case err := <-done:
			t.Fatalf("the run ended before %s asked turn %d: %v", k.call, k.turn, err)
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s never asked turn %d", k.call, k.turn)
		}
	}
	srv.Kill()
	m.release(last)
	waitFor(t, "the finishing call's child to get its final answer while the server is down", 2*time.Minute, func() bool { return answeredIn(w) == 2 })
	// The fault's length, not a wait for something to happen.
	<-time.After(outage)
	srv.StartAgain()
	m.release(mid)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(4 * time.Minute):
		t.Fatal("the run did not finish after the server came back")
	}
	if res.Status != workflow.RunDone || res.Agents != 4 {
		t.Fatalf("status %s, %d agents; want done with 4: %+v", res.Status, res.Agents, res.Phases)
	}
	for _, call := range []string{"restarted: before", "restarted: across", "restarted: mid-turn", "restarted: after"} {
		m.checkAskedOnce(t, call, -1)
	}
	for _, ph := range res.Phases {
		for _, call := range ph.Calls {
			if call.Attempts != 1 {
				t.Errorf("call %s took %d attempts; want 1 (a restart is not a dead worker)", call.Key, call.Attempts)
			}
		}
	}
	if n := len(w.taskDirs()); n != 4 {
		t.Errorf("the worker ran %d tasks; want 4 (none twice)", n)
	}
}

// TestStoppedWorkerNeverAsksAFinishedTurnAgain: a worker is stopped
// (SIGSTOP) past the heartbeat timeout while its call's child waits for the
// model after its first tool turn; the call is continued on the other
// worker from that turn's boundary. When the stopped worker goes on
// (SIGCONT) and its child gets the answer it waited for, the child asks the
// model nothing more: the server runs the call elsewhere.
func TestStoppedWorkerNeverAsksAFinishedTurnAgain(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	workers := []*workerProc{
		startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...),
		startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...),
	}
	eng := newEngine(c, q)
	const desc = "stopped worker"
	k := turnKey{desc, 1}
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
		t.Fatalf("the call ended before its second turn: %+v, %v", o.r, o.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the call's second turn was never asked")
	}
	victim, other := workers[0], workers[1]
	if other.taskDirs()[id] {
		victim, other = other, victim
	}
	if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var o callOut
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		_ = victim.cmd.Process.Signal(syscall.SIGCONT)
		t.Fatal("the call did not finish on the other worker")
	}
	if err := victim.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.Status != dispatch.StatusDone || !strings.Contains(o.r.Summary, "finished after 2 tool turns") || !other.taskDirs()[id] {
		t.Fatalf("result %+v; want task %s done on the other worker", o.r, id)
	}
	// The stopped worker's child gets its answer now; its worker hears the
	// attempt is gone at the next turn boundary and stops it there.
	m.release(k)
	out := filepath.Join(victim.p.root, ".brood", "dispatch", id, "output.json")
	waitFor(t, "the stopped worker's child to end", 2*time.Minute, func() bool {
		_, err := os.Stat(out)
		return err == nil
	})
	m.checkAskedOnce(t, desc, 1)
}
