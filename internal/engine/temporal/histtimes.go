package temporal

import (
	"cmp"
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/broodhq/brood/internal/call"
	wf "github.com/broodhq/brood/internal/workflow"
)

// callHistory is what the server's history of a single call's workflow
// execution says of its activity: the worker that started its last
// attempt, how many attempts it took (the started event of a retried
// activity carries its attempt number), and its times by the server's
// clock: the call's submit (the workflow's start), the start of the
// attempt that ended it and its end. The queued and run split a user sees
// comes from here, never from a result's word (whoever completes the
// activity or the workflow writes that).
type callHistory struct {
	Worker                string
	Attempts              int
	Began, Started, Ended time.Time
}

// historyOf reads a call workflow's history (zero values when it has no
// started activity, or the server does not answer): for a run that has
// not ended (a closed one's comes with its replay: replayCall).
func (e *Engine) historyOf(ctx context.Context, wid, runID string) callHistory {
	var evs []*historypb.HistoryEvent
	it := e.cfg.Client.GetWorkflowHistory(ctx, wid, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	return callTimes(&historypb.History{Events: evs})
}

// callTimes is what a call workflow's history h says of its activity.
func callTimes(h *historypb.History) callHistory {
	var c callHistory
	for _, ev := range h.GetEvents() {
		switch {
		case ev.GetWorkflowExecutionStartedEventAttributes() != nil:
			c.Began = ev.GetEventTime().AsTime()
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			a := ev.GetActivityTaskStartedEventAttributes()
			c.Worker, c.Attempts, c.Started = a.GetIdentity(), int(a.GetAttempt()), ev.GetEventTime().AsTime()
		case ev.GetActivityTaskCompletedEventAttributes() != nil, ev.GetActivityTaskCanceledEventAttributes() != nil:
			// Completed, or stopped by a cancel its worker acknowledged
			// once the call's child had ended (callcancel.go).
			c.Ended = ev.GetEventTime().AsTime()
		}
	}
	return c
}

// serverTimes gives r the queued and run times the server's history says
// (h), in place of any it came with; none when the history does not say.
func serverTimes(r *call.Result, h callHistory) {
	r.QueuedMS, r.RanMS = 0, 0
	if h.Began.IsZero() || h.Ended.IsZero() {
		return
	}
	splitTimes(r, h.Began, h.Started, h.Ended)
}

// planTimes is what a plan run's execution history h says of each call
// activity (by its task): its schedule, the start of the attempt that
// ended it and its end, by the server's clock.
func planTimes(dc converter.DataConverter, h *historypb.History) map[string]callHistory {
	byEvent := map[int64]string{}
	out := map[string]callHistory{}
	for _, ev := range h.GetEvents() {
		at := ev.GetEventTime().AsTime()
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			a := ev.GetActivityTaskScheduledEventAttributes()
			var in CallInput
			if a.GetActivityType().GetName() != CallActivityName || dc.FromPayloads(a.GetInput(), &in) != nil {
				continue
			}
			id := cmp.Or(in.Spec.Resume, in.Spec.TaskID)
			byEvent[ev.GetEventId()] = id
			out[id] = callHistory{Began: at}
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			a := ev.GetActivityTaskStartedEventAttributes()
			if id, ok := byEvent[a.GetScheduledEventId()]; ok {
				h := out[id]
				h.Worker, h.Attempts, h.Started = a.GetIdentity(), int(a.GetAttempt()), at
				out[id] = h
			}
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			ended(out, byEvent[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()], at)
		case ev.GetActivityTaskCanceledEventAttributes() != nil:
			// Stopped by the run's cancel, acknowledged by its worker
			// once the call's child had ended (callcancel.go).
			ended(out, byEvent[ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()], at)
		}
	}
	return out
}

// ended sets the end of call id's activity in out to at (id "": not a
// call's activity).
func ended(out map[string]callHistory, id string, at time.Time) {
	if id == "" {
		return
	}
	h := out[id]
	h.Ended = at
	out[id] = h
}

// takeTimes gives every call record of r's output the queued and run
// split of the execution's history (r.times: planTimes), in place of the
// workflow's own (which it took from each result's word); a record whose
// call neither completed in that execution nor was stopped there by its
// cancel (an earlier execution's, a failed one) has none. The run's journal lines get the same.
func takeTimes(r *runRead) {
	out, hist := &r.out, r.times
	if out.Result == nil {
		return
	}
	set := func(c *wf.CallRecord) {
		var r call.Result
		serverTimes(&r, hist[c.TaskID])
		c.QueuedMS, c.RanMS = r.QueuedMS, r.RanMS
	}
	for i := range out.Result.Phases {
		for j := range out.Result.Phases[i].Calls {
			set(&out.Result.Phases[i].Calls[j])
		}
	}
	for i, l := range out.Journal {
		if l.Rec != nil {
			rec := *l.Rec
			set(&rec)
			out.Journal[i].Rec = &rec
		}
	}
}
