package temporal_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/workflow"
)

// TestQueuedIsSaidEverywhere: a call no worker has taken is queued, with
// why, in every listing — show, list, the fleet's tasks, tasks show and
// the submitter's progress — never running: first with no worker polling
// the queue at all, then with one worker whose single slot a call of the
// plan holds, so the plan's other call and a single call wait for it.
func TestQueuedIsSaidEverywhere(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	eng := newEngine(c, q)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var mu sync.Mutex
	var events []workflow.Event
	ids := make(chan string, 1)
	p := enginetest.Plan(t, "name: q\nphases:\n  - id: p\n    parallel:\n      - {agent: explore, prompt: \"wait forever\"}\n      - {agent: explore, prompt: \"wait forever\"}\n")
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(id string) { ids <- id }, Events: func(e workflow.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		}})
	}()
	id := <-ids
	noWorker := "queued (no worker is polling task queue " + q + ")"
	// Errors only until the worker is up: the run's cancel at the end
	// needs a worker to end it.
	info, err := eng.Show(ctx, id)
	if err != nil || info.Status != noWorker {
		t.Errorf("show with no worker: %+v (%v); want %q", info, err, noWorker)
	}
	if runs, err := eng.List(ctx); err != nil || len(runs) != 1 || runs[0].Status != noWorker {
		t.Errorf("list with no worker: %+v (%v); want %q", runs, err, noWorker)
	}
	if tasks, err := eng.Tasks(ctx); err != nil || len(tasks) != 1 || tasks[0].Status != noWorker {
		t.Errorf("tasks with no worker: %+v (%v); want %q", tasks, err, noWorker)
	}
	// The submitter says it too, though no worker answers its query.
	waitFor(t, "the progress saying no worker polls", time.Minute, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(events, func(e workflow.Event) bool { return e.Phase == "" && e.Status == noWorker })
	})

	startWorker(t, c, q, enginetest.Script, 1, &temporal.DirStore{Dir: t.TempDir()})
	waitFor(t, "one call of the plan running and one waiting", time.Minute, func() bool {
		info, err = eng.Show(ctx, id)
		return err == nil && info.Running == 1 && info.Agents == 2
	})
	if info.Status != workflow.RunRunning {
		t.Errorf("show with a call running: %s; want running", info.Status)
	}
	// No closed history to replay yet: the counts are the workflow's own
	// report, and show says so (histreplay.go).
	if !strings.Contains(info.Reason, "progress as the run's workflow reports it, unchecked until the run ends") {
		t.Errorf("show of a running run: reason %q; want it to say its progress is the workflow's, unchecked", info.Reason)
	}
	// The single call only now, so that the plan's call holds the slot (the
	// worker takes whichever call is scheduled first).
	callID := dispatch.NewID()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = eng.Call(ctx, call.Spec{TaskID: callID, Agent: "explore", Prompt: "wait forever", Description: "wait forever"})
	}()
	var running string
	waitFor(t, "the running call's heartbeat", time.Minute, func() bool {
		for _, pc := range pending(t, c, id) {
			running = pc.HB.TaskID
		}
		return running != ""
	})
	if d, err := eng.Task(ctx, running); err != nil || d.Kind != "plan call" || d.Status != workflow.RunRunning || d.Workflow != id {
		t.Errorf("task %s (the plan's running call): %+v (%v); want it running in plan run %s", running, d, err, id)
	}
	// A worker polled lately and took no call: its slot is busy (what
	// is known is said, never that a worker is free).
	free := "queued (waiting for a worker: last poll of task queue " + q + " "
	waitFor(t, "the single call listed", time.Minute, func() bool {
		d, err := eng.Task(ctx, callID)
		return err == nil && strings.HasPrefix(d.Status, free)
	})
	tasks, err := eng.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range tasks {
		want := map[string]string{"plan": workflow.RunRunning, "call": free}[ft.Kind]
		if ft.Status != want && !(ft.Kind == "call" && strings.HasPrefix(ft.Status, free)) {
			t.Errorf("tasks: %s %s is %q; want %q", ft.Kind, ft.ID, ft.Status, want)
		}
	}
	waitFor(t, "progress saying one running, one queued", time.Minute, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range events {
			if e.Running == 1 && e.Queued == 1 {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	for _, e := range events {
		if e.Running > 1 {
			t.Errorf("progress %+v: more calls running than the worker's one slot", e)
		}
		if e.Running == 0 && e.Queued > 0 && e.Status != noWorker && !strings.HasPrefix(e.Status, "queued") {
			t.Errorf("progress %+v: calls waiting and none running, yet not queued", e)
		}
	}
}

// TestCallVerbsTakeAPrefix: a single fleet call is cancelled and landed
// by a prefix of its task id, as brood tasks takes local ones.
func TestCallVerbsTakeAPrefix(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	startWorker(t, c, q, enginetest.Script, 1, &temporal.DirStore{Dir: t.TempDir()})
	eng := newEngine(c, q)
	id := dispatch.NewID()
	ended := make(chan *call.Result, 1)
	go func() {
		r, _ := eng.Call(context.Background(), call.Spec{TaskID: id, Agent: "explore", Prompt: "wait forever", Description: "wait forever"})
		ended <- r
	}()
	waitFor(t, "the call running", time.Minute, func() bool {
		d, err := eng.Task(t.Context(), id)
		return err == nil && d.Status == workflow.RunRunning
	})
	if err := eng.Cancel(t.Context(), strings.ToLower(id[:12])); err != nil {
		t.Fatalf("cancel by a prefix: %v", err)
	}
	select {
	case r := <-ended:
		if r == nil || r.Status != dispatch.StatusCancelled {
			t.Fatalf("the call ended %+v; want cancelled", r)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the cancelled call did not end")
	}
	l, err := eng.LandCall(t.Context(), id[:12])
	if err != nil || l.TaskID != id {
		t.Fatalf("land by a prefix: %+v (%v); want task %s", l, err, id)
	}
}

// TestAStoppedWorkerRunsNothing (issue 26): with its only worker stopped
// (the server lists its pollers for minutes), a new plan, which no worker
// has taken, is queued in show, list and the fleet's tasks, never
// running, and the submitter's progress says so at once, without a worker
// to answer its query.
func TestAStoppedWorkerRunsNothing(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	p := newProject(t, enginetest.Script)
	w := temporal.NewWorker(c, temporal.WorkerOptions{Queue: q, Concurrency: 1, Heartbeat: 200 * time.Millisecond, StopTimeout: 5 * time.Second,
		Activities: &temporal.Activities{Runner: p.dispatcher(t, 1), ProjectRoot: p.root, Store: &temporal.DirStore{Dir: t.TempDir()}, Worker: "stopped"}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker's pollers listed", time.Minute, func() bool {
		for _, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
			d, err := c.DescribeTaskQueue(t.Context(), q, typ)
			if err != nil || len(d.GetPollers()) == 0 {
				return false
			}
		}
		return true
	})
	w.Stop()
	eng := newEngine(c, q)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	defer func() { <-ended }()
	defer cancel()
	var mu sync.Mutex
	var events []workflow.Event
	ids := make(chan string, 1)
	plan := enginetest.Plan(t, "name: q\nphases:\n  - id: p\n    parallel:\n      - {agent: explore, prompt: \"wait forever\"}\n")
	go func() {
		defer close(ended)
		_, _ = eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml", Started: func(id string) { ids <- id }, Events: func(e workflow.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		}})
	}()
	id := <-ids
	// No worker ends a cancelled run: it is terminated when the test ends.
	defer func() { _ = c.TerminateWorkflow(context.Background(), id, "", "the test ends") }()
	queued := func(st string) bool { return strings.HasPrefix(st, "queued (") }
	if info, err := eng.Show(ctx, id); err != nil || !queued(info.Status) {
		t.Errorf("show: %+v (%v); want queued", info, err)
	}
	if runs, err := eng.List(ctx); err != nil || len(runs) != 1 || !queued(runs[0].Status) {
		t.Errorf("list: %+v (%v); want the run queued", runs, err)
	}
	if tasks, err := eng.Tasks(ctx); err != nil || len(tasks) != 1 || !queued(tasks[0].Status) {
		t.Errorf("tasks: %+v (%v); want the plan queued", tasks, err)
	}
	waitFor(t, "the progress saying the run is queued", time.Minute, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(events, func(e workflow.Event) bool { return e.Phase == "" && queued(e.Status) })
	})
	mu.Lock()
	defer mu.Unlock()
	for _, e := range events {
		if e.Status == workflow.RunRunning || e.Running > 0 {
			t.Errorf("progress %+v: running, with no worker", e)
		}
	}
}

// TestCancelWithNoWorkerReturns: a submitter cancelled (Ctrl-C) while no
// worker polls its run's queue stops waiting for an end no worker would
// bring, saying so, instead of hanging.
func TestCancelWithNoWorkerReturns(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	eng := newEngine(c, q)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := make(chan string, 1)
	ended := make(chan error, 1)
	plan := enginetest.Plan(t, "name: q\nphases:\n  - id: p\n    parallel:\n      - {agent: explore, prompt: \"wait forever\"}\n")
	go func() {
		_, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml", Started: func(id string) { ids <- id }})
		ended <- err
	}()
	id := <-ids
	defer func() { _ = c.TerminateWorkflow(context.Background(), id, "", "the test ends") }()
	cancel()
	select {
	case err := <-ended:
		if err == nil || !strings.Contains(err.Error(), "no worker is polling task queue "+q+" to end it") {
			t.Errorf("the cancelled run returned %v; want that no worker polls its queue to end it", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the cancelled submitter still waits for an end no worker brings")
	}
}

// TestQueuedAfterAWorkerStops (F8): a call submitted just after its queue's
// only worker stopped, while the server still lists that worker's pollers
// (Temporal 1.29: 15–20 s), is queued, never running, and its reason says
// only what is known: no worker polling, or when a worker last polled the
// queue and which; never that a worker is free to take it.
func TestQueuedAfterAWorkerStops(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	p := newProject(t, enginetest.Script)
	w := temporal.NewWorker(c, temporal.WorkerOptions{Queue: q, Concurrency: 1, Heartbeat: 200 * time.Millisecond, StopTimeout: 5 * time.Second,
		Activities: &temporal.Activities{Runner: p.dispatcher(t, 1), ProjectRoot: p.root, Store: &temporal.DirStore{Dir: t.TempDir()}, Worker: "stopped"}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker's pollers listed", time.Minute, func() bool {
		for _, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
			d, err := c.DescribeTaskQueue(t.Context(), q, typ)
			if err != nil || len(d.GetPollers()) == 0 {
				return false
			}
		}
		return true
	})
	w.Stop()
	eng := newEngine(c, q)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	defer func() { <-ended }()
	defer cancel()
	id := dispatch.NewID()
	go func() {
		defer close(ended)
		_, _ = eng.Call(ctx, call.Spec{TaskID: id, Agent: "explore", Prompt: "wait forever", Description: "after the worker stopped"})
	}()
	defer func() { _ = c.TerminateWorkflow(context.Background(), "brood-call-"+id, "", "the test ends") }()
	var d *temporal.FleetTaskDetail
	waitFor(t, "the call listed", time.Minute, func() bool {
		var err error
		d, err = eng.Task(ctx, id)
		return err == nil
	})
	known := func(st string) bool {
		return st == "queued (no worker is polling task queue "+q+")" || strings.HasPrefix(st, "queued (waiting for a worker: last poll of task queue "+q+" ")
	}
	if !known(d.Status) {
		t.Errorf("tasks show of a call submitted after its only worker stopped: %q; want it queued, saying no worker polls or when one last did", d.Status)
	}
	if tasks, err := eng.Tasks(ctx); err != nil || len(tasks) != 1 || !known(tasks[0].Status) {
		t.Errorf("tasks: %+v (%v); want the call queued, saying no worker polls or when one last did", tasks, err)
	}
}
