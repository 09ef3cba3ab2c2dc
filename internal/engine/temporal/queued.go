package temporal

import (
	"context"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	wf "github.com/broodhq/brood/internal/workflow"
)

// A call is running on the fleet only once a worker has taken it: until
// then it is queued, and every listing says so with why (no worker polls
// its task queue, or every worker's slots are taken), never running.

// agentSlots counts a workflow's pending agent calls: started (a worker
// runs the attempt) and waiting (scheduled, no worker has taken it, a
// retry's included).
func agentSlots(d *workflowservice.DescribeWorkflowExecutionResponse) (started, waiting int) {
	for _, a := range d.GetPendingActivities() {
		if a.GetActivityType().GetName() != CallActivityName {
			continue
		}
		switch a.GetState() {
		case enumspb.PENDING_ACTIVITY_STATE_STARTED:
			started++
		case enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED, enumspb.PENDING_ACTIVITY_STATE_PAUSE_REQUESTED:
			if a.GetLastStartedTime() != nil {
				started++
			} else {
				waiting++
			}
		default:
			waiting++
		}
	}
	return started, waiting
}

// queueWord is what a listing says of one task queue's workers (queued),
// asked once per listing.
type queueWord struct {
	e     *Engine
	words map[string]string
}

func (q *queueWord) of(ctx context.Context, queue string) string {
	if w, ok := q.words[queue]; ok {
		return w
	}
	if q.words == nil {
		q.words = map[string]string{}
	}
	q.words[queue] = q.e.queued(ctx, queue)
	return q.words[queue]
}

// liveStatus is the status of a running workflow (a call or a plan):
// running while a worker runs one of its calls; queued, with why, while
// its calls wait for a worker, while its own step waits for one (a plan
// no worker has taken yet: none of its calls can have started), or while
// no worker polls its task queue at all (a plan between calls whose
// workers are all gone). The task queue's pollers only choose why it is
// queued: the server lists a stopped worker's pollers for minutes, so
// they never make a call that no worker took running.
func (e *Engine) liveStatus(ctx context.Context, d *workflowservice.DescribeWorkflowExecutionResponse, qw *queueWord) string {
	started, waiting := agentSlots(d)
	if started > 0 {
		return wf.RunRunning
	}
	queue := queueOf(d)
	if unpolled(d, time.Now()) {
		return noWorkerWord(queue)
	}
	word := qw.of(ctx, queue)
	if waiting > 0 || stepWaits(d) || noWorker(word) {
		return word
	}
	return wf.RunRunning
}

// queueOf is the task queue a workflow runs on.
func queueOf(d *workflowservice.DescribeWorkflowExecutionResponse) string {
	if q := d.GetExecutionConfig().GetTaskQueue().GetName(); q != "" {
		return q
	}
	return d.GetWorkflowExecutionInfo().GetTaskQueue()
}

// stepWaits: the workflow's own step (a workflow task) is scheduled and
// no worker has taken it.
func stepWaits(d *workflowservice.DescribeWorkflowExecutionResponse) bool {
	return d.GetPendingWorkflowTask().GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED
}

// unpolledAfter is how long a workflow's step may wait before that says
// no worker polls its queue: a live worker's workflow pollers go on while
// its calls run and take a step at once, and a dead worker's step moves
// from its sticky queue to the shared one within 5 s.
const unpolledAfter = 15 * time.Second

// unpolled: the workflow's step has waited longer than a live worker
// leaves one, so no worker polls the queue, whatever the poller list (it
// names a stopped worker for minutes) says.
func unpolled(d *workflowservice.DescribeWorkflowExecutionResponse, now time.Time) bool {
	wt := d.GetPendingWorkflowTask()
	at := wt.GetOriginalScheduledTime()
	if at == nil {
		at = wt.GetScheduledTime()
	}
	return stepWaits(d) && at != nil && now.Sub(at.AsTime()) > unpolledAfter
}

// noWorkerWhy is why what waits on a queue no worker polls waits.
func noWorkerWhy(queue string) string { return noWorkerPhrase + queue }

const noWorkerPhrase = "no worker is polling task queue "

// noWorkerWord is the status of what waits on a queue no worker polls.
func noWorkerWord(queue string) string { return "queued (" + noWorkerWhy(queue) + ")" }

// noWorker: status says no worker polls its queue (noWorkerWord).
func noWorker(status string) bool { return strings.Contains(status, noWorkerPhrase) }

// isQueued: a status liveStatus gave a call that no worker runs.
func isQueued(status string) bool { return strings.HasPrefix(status, "queued") }

// splitRunning moves a plan's calls that wait for a worker from running to
// queued in its progress events: the executor counts a call running from
// the moment it hands it to the fleet; started is how many a worker runs.
// Within one phase this is exact; when several phases have calls out, the
// waiting ones are taken from the latest phases first (their calls were
// handed out last).
//
// A writer whose child has ended while its change is put into the run's
// tree (its chain activity, chaining) is neither: it is landing, never
// queued.
func splitRunning(events []wf.Event, started, chaining int) {
	running := 0
	for _, ev := range events {
		running += ev.Running
	}
	extra := running - started
	for i := len(events) - 1; i >= 0 && extra > 0 && chaining > 0; i-- {
		n := min(extra, chaining, events[i].Running)
		events[i].Running -= n
		events[i].Chaining += n
		extra, chaining = extra-n, chaining-n
	}
	for i := len(events) - 1; i >= 0 && extra > 0; i-- {
		n := min(extra, events[i].Running)
		events[i].Running -= n
		events[i].Queued += n
		extra -= n
	}
}

// chaining counts a plan's writers whose change is being put into the
// run's tree: its pending chain activities, started or not.
func chaining(d *workflowservice.DescribeWorkflowExecutionResponse) int {
	n := 0
	for _, a := range d.GetPendingActivities() {
		if a.GetActivityType().GetName() == ChainActivityName {
			n++
		}
	}
	return n
}

// queuedEvents makes a running plan's progress say which of its calls a
// worker runs and which wait for one (splitRunning), and a phase whose
// calls all wait says why (queued: no worker polls the task queue, or
// none is free). It reports false for a run it cannot describe: its
// events would count as running calls no worker may have taken, so they
// are not passed on (the next progress says it).
func (e *Engine) queuedEvents(ctx context.Context, id, runID string, events []wf.Event, inChain int) bool {
	running := 0
	for _, ev := range events {
		running += ev.Running
	}
	if running == 0 {
		return true
	}
	d, err := e.cfg.Client.DescribeWorkflowExecution(ctx, id, runID)
	if err != nil {
		return false
	}
	if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return true
	}
	started, _ := agentSlots(d)
	splitRunning(events, started, max(chaining(d), inChain))
	if started > 0 {
		return true
	}
	qw := &queueWord{e: e}
	for i := range events {
		if ev := &events[i]; ev.Status == wf.RunRunning && ev.Running == 0 && ev.Chaining == 0 && ev.Queued > 0 {
			ev.Status = e.liveStatus(ctx, d, qw)
		}
	}
	return true
}

// heard: a worker has answered the run's progress (a phase was seen).
func heard(seen map[string]wf.Event) bool {
	for phase := range seen {
		if phase != "" {
			return true
		}
	}
	return false
}

// runWaits passes on, as the run's own event (no phase), that a run no
// worker runs a call of is queued and why, when that is new; it reports
// whether the run is queued (its step or its calls wait for a worker).
func (e *Engine) runWaits(ctx context.Context, id, runID string, seen map[string]wf.Event, events func(wf.Event)) bool {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d, err := e.cfg.Client.DescribeWorkflowExecution(dctx, id, runID)
	if word, ok := unreachableWord(ctx, err); ok {
		if ev := (wf.Event{RunID: id, Status: word}); seen[""] != ev {
			seen[""] = ev
			events(ev)
		}
		return true // nothing more to ask it now
	}
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return false
	}
	st := e.liveStatus(dctx, d, &queueWord{e: e})
	if !isQueued(st) {
		return false
	}
	ev := wf.Event{RunID: id, Status: st}
	if old, ok := seen[""]; !ok || !sameNews(old, ev) {
		seen[""] = ev
		events(ev)
	}
	return true
}

// callProgress passes on a single call's status when it changes, as the
// run's own event: queued (with why) until a worker takes it, then
// running on that worker (a call's workflow has no progress query).
func (e *Engine) callProgress(ctx context.Context, id, runID string, seen map[string]wf.Event, events func(wf.Event)) {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d, err := e.cfg.Client.DescribeWorkflowExecution(dctx, id, runID)
	if word, ok := unreachableWord(ctx, err); ok {
		if ev := (wf.Event{RunID: id, Status: word}); callNews(seen, ev) {
			events(ev)
		}
		return
	}
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return
	}
	st := e.liveStatus(dctx, d, &queueWord{e: e})
	if st == wf.RunRunning {
		for _, a := range d.GetPendingActivities() {
			if w := a.GetLastWorkerIdentity(); a.GetActivityType().GetName() == CallActivityName && w != "" {
				st += " on worker " + w
			}
		}
	}
	if ev := (wf.Event{RunID: id, Status: st}); callNews(seen, ev) {
		events(ev)
	}
}

// callNews reports whether a single call's status ev is news to its
// submitter, and records it: a change, except a bare "running" after
// "running on worker W" (its attempt ended and the workflow has yet to
// end, or a retry is not taken yet): the worker named stays the last
// word, never the same running said again without it.
func callNews(seen map[string]wf.Event, ev wf.Event) bool {
	old, ok := seen[""]
	if ok && ev.Status == wf.RunRunning && strings.HasPrefix(old.Status, wf.RunRunning+" on worker ") {
		return false
	}
	if ok && sameNews(old, ev) {
		return false
	}
	seen[""] = ev
	return true
}

// cancelTaken is how long a cancelled workflow's step may wait for a
// worker, while no worker runs any of its calls, before its submitter
// stops waiting: a live worker takes a step within a moment.
const cancelTaken = time.Second

// nobodyEnds is why a cancelled workflow's submitter stops waiting for its
// end: no worker has taken the step that ends it and none runs any of its
// calls (nothing of it runs anywhere, so nothing is lost), either because
// no worker polls its task queue (a run no worker ever took, or whose
// workers are all gone) or because none took it within cancelTaken of
// the cancel (asked at cancelled). "" while a worker may end it soon.
func (e *Engine) nobodyEnds(ctx context.Context, id, runID string, cancelled time.Time) string {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d, err := e.cfg.Client.DescribeWorkflowExecution(dctx, id, runID)
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || !stepWaits(d) {
		return ""
	}
	if started, _ := agentSlots(d); started > 0 || chaining(d) > 0 {
		return "" // a worker runs its calls: they stop, and the run ends
	}
	why := noWorkerWhy(queueOf(d))
	switch {
	case noWorker(e.liveStatus(dctx, d, &queueWord{e: e})):
	case time.Since(cancelled) >= cancelTaken:
		// The server lists a worker that polled lately, but a live one
		// takes a step at once, whatever its calls.
		why = fmt.Sprintf("no worker took the cancel within %v (one polled task queue %s lately; none answers now)", cancelTaken, queueOf(d))
	default:
		return ""
	}
	follow := "brood workflow show " + id
	if task, ok := strings.CutPrefix(id, callWorkflowID("")); ok {
		follow = "brood tasks show " + task
	}
	return "workflow " + id + " was asked to cancel; none of its calls runs, but " + why + " to end it: it ends when a worker takes it (" + follow +
		" follows it), or at once with temporal workflow terminate --workflow-id " + id
}
