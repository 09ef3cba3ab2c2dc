package temporal_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// timeline is where a plan's calls spent their time on the fleet, from
// its workflow's history (medians and 90th percentiles over the calls).
type timeline struct {
	// queued: an activity scheduled until a worker started it.
	queued [2]time.Duration
	// running: started until completed (the worker's whole activity: the
	// copy, the child, the result).
	running [2]time.Duration
	// turnaround: an activity completed until the workflow scheduled the
	// next one (a workflow task on the plan's worker).
	turnaround [2]time.Duration
	// wfTask: a workflow task started until completed (the plan's code on
	// its worker); wfQueued: scheduled until started.
	wfTask, wfQueued [2]time.Duration
	// wfByPart: wfTask's median in each quarter of the run, in order (a
	// task that replays the history grows; one that wakes every waiting
	// call shrinks as they finish).
	wfByPart [4]time.Duration
	// calls and wfTasks count the activities and the workflow tasks (a
	// task takes every completion that arrived since the last one).
	calls, wfTasks int
	// atOnce counts the calls started within 1 ms of their schedule (an
	// eager start, BROOD_BENCH_EAGER, is started at once).
	atOnce int
}

// planTimeline reads the history of the plan run id.
func planTimeline(t testing.TB, c client.Client, id string) timeline {
	t.Helper()
	scheduled := map[int64]time.Time{}
	var queued, running, turn []time.Duration
	started := map[int64]time.Time{}
	var completed []time.Time // waiting for the next schedule
	var wfTask, wfQueued []time.Duration
	var wtScheduled, wtStarted time.Time
	atOnce := 0
	it := c.GetWorkflowHistory(t.Context(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		at := e.GetEventTime().AsTime()
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			wtScheduled = at
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			wtStarted = at
			wfQueued = append(wfQueued, at.Sub(wtScheduled))
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			wfTask = append(wfTask, at.Sub(wtStarted))
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled[e.GetEventId()] = at
			for _, c := range completed {
				turn = append(turn, at.Sub(c))
			}
			completed = completed[:0]
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := e.GetActivityTaskStartedEventAttributes()
			queued = append(queued, at.Sub(scheduled[a.GetScheduledEventId()]))
			if queued[len(queued)-1] < time.Millisecond {
				atOnce++
			}
			started[a.GetScheduledEventId()] = at
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := e.GetActivityTaskCompletedEventAttributes()
			running = append(running, at.Sub(started[a.GetScheduledEventId()]))
			completed = append(completed, at)
		}
	}
	tl := timeline{queued: pct(queued), running: pct(running), turnaround: pct(turn), wfQueued: pct(wfQueued), calls: len(running), wfTasks: len(wfTask), atOnce: atOnce}
	for i := range tl.wfByPart {
		part := slices.Clone(wfTask[i*len(wfTask)/4 : (i+1)*len(wfTask)/4])
		tl.wfByPart[i] = pct(part)[0]
	}
	tl.wfTask = pct(wfTask)
	return tl
}

// pct is the median and the 90th percentile of ds.
func pct(ds []time.Duration) [2]time.Duration {
	if len(ds) == 0 {
		return [2]time.Duration{}
	}
	slices.Sort(ds)
	return [2]time.Duration{ds[len(ds)/2], ds[len(ds)*9/10]}
}

func (tl timeline) String() string {
	ms := func(d [2]time.Duration) string {
		return d[0].Round(time.Millisecond).String() + " (p90 " + d[1].Round(time.Millisecond).String() + ")"
	}
	return fmt.Sprintf("%d calls, %d workflow tasks: ", tl.calls, tl.wfTasks) + "queued " + ms(tl.queued) + fmt.Sprintf(" (%d at once)", tl.atOnce) + ", activity " + ms(tl.running) + ", completed to next scheduled " + ms(tl.turnaround) +
		" (workflow task queued " + ms(tl.wfQueued) + ", run " + ms(tl.wfTask) + "; run by quarter of the plan " +
		tl.wfByPart[0].Round(time.Millisecond).String() + ", " + tl.wfByPart[1].Round(time.Millisecond).String() + ", " +
		tl.wfByPart[2].Round(time.Millisecond).String() + ", " + tl.wfByPart[3].Round(time.Millisecond).String() + ")"
}
