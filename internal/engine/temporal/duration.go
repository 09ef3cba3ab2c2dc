package temporal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/broodhq/brood/internal/call"
)

// callDuration puts a fleet call's own duration, from its first schedule
// to its completion (as the local engine's is its dispatch's), in its
// result's tag, in place of the one its last attempt's child wrote; that
// one stays, labelled last-attempt-child-duration. text without a tag, or
// with the label already (a result kept from an earlier run), is returned
// as it is.
func callDuration(text string, d time.Duration) string {
	const open, attr, label = "<subagent-result ", ` duration="`, ` last-attempt-child-duration="`
	start := strings.Index(text, open)
	if start < 0 || strings.Contains(text[:start], "\n") {
		return text
	}
	end := strings.IndexByte(text[start:], '>')
	if end < 0 {
		return text
	}
	tag := text[start : start+end]
	i := strings.Index(tag, attr)
	if i < 0 || strings.Contains(tag, label) {
		return text
	}
	v := i + len(attr)
	k := strings.IndexByte(tag[v:], '"')
	if k < 0 {
		return text
	}
	child := tag[v : v+k]
	return text[:start] + tag[:i] + fmt.Sprintf(`%s%s"%s%s"`, label, child, attr, d.Round(time.Millisecond)) + text[start+v+k+1:]
}

// tagPatch says in a fleet call's result tag what became of its change in
// the submitter's tree (patch="applied" or "not-applied"), as a local
// isolated call's tag does; text without a tag, or whose tag says it
// already, is returned as it is.
func tagPatch(text, patch string) string {
	const open, status = "<subagent-result ", ` status="`
	start := strings.Index(text, open)
	if patch == "" || start < 0 || strings.Contains(text[:start], "\n") {
		return text
	}
	end := strings.IndexByte(text[start:], '>')
	if end < 0 {
		return text
	}
	tag := text[start : start+end]
	i := strings.Index(tag, status)
	if i < 0 || strings.Contains(tag, ` patch="`) {
		return text
	}
	v := i + len(status)
	k := strings.IndexByte(tag[v:], '"')
	if k < 0 {
		return text
	}
	at := start + v + k + 1
	return text[:at] + fmt.Sprintf(` patch="%s"`, patch) + text[at:]
}

// stampStart says in a call's output when its attempt started (the
// server's clock, as the activity's info has it).
func stampStart(ctx context.Context, out *CallOutput) {
	if out != nil && activity.IsActivity(ctx) {
		out.Started = activity.GetInfo(ctx).StartedTime.UTC()
	}
}

// splitTimes gives a fleet call's result its queued and run times: queued
// from began (its first schedule, a single call's submit) to started (the
// attempt that returned it), ran from there to end (its activity's
// completion). Nothing when the worker did not say when it
// started, or its clock and the workflow's disagree.
func splitTimes(r *call.Result, began, started, end time.Time) {
	if started.IsZero() || started.Before(began) || end.Before(started) {
		return
	}
	r.QueuedMS, r.RanMS = started.Sub(began).Milliseconds(), end.Sub(started).Milliseconds()
}
