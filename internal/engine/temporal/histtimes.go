package temporal

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/broodhq/brood/internal/call"
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
// started activity, or the server does not answer).
func (e *Engine) historyOf(ctx context.Context, wid, runID string) callHistory {
	var h callHistory
	it := e.cfg.Client.GetWorkflowHistory(ctx, wid, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return h
		}
		switch {
		case ev.GetWorkflowExecutionStartedEventAttributes() != nil:
			h.Began = ev.GetEventTime().AsTime()
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			a := ev.GetActivityTaskStartedEventAttributes()
			h.Worker, h.Attempts, h.Started = a.GetIdentity(), int(a.GetAttempt()), ev.GetEventTime().AsTime()
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			h.Ended = ev.GetEventTime().AsTime()
		}
	}
	return h
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
