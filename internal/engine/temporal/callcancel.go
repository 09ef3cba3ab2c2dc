package temporal

import (
	"cmp"

	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// A call the run's cancel stopped (issue 26 F6, review37 P3-2 and P3-3):
// its worker sends the stopped child's result with the cancel, signed as
// a finished one is, so the run counts the turns the call paid for, as a
// local cancelled child's do. Of that result only its figures are kept
// (usage, attempts, the worker whose child ran it); its reason is brood's
// (cancelled), never the child's, which wrote it as it liked. A plan's
// workflow takes the figures when a worker the run trusts signed them for
// this very call (takeCancelled); a single call's workflow trusts no key
// and passes the signed result on (CallOutput.Stopped) for its submitter
// to check as it checks a finished one (Engine.stoppedFigures).

// cancelledCall is call in as the cancel left it (stopped: the cancel's
// details, hb: the call's last heartbeat, which a resume continues from).
func (r *activityRunner) cancelledCall(w workflow.Context, in CallInput, stopped *CallOutput, hb Heartbeat) *CallOutput {
	spec := in.Spec
	out := &CallOutput{Result: call.Result{TaskID: cmp.Or(spec.Resume, spec.TaskID), Agent: spec.Agent,
		Status: dispatch.StatusCancelled, Error: cancelled(w)}, Last: &hb}
	if r.gate != nil {
		// The cancel's details are whoever ended the attempt's: none is
		// kept but what a trusted worker signed for this call (its
		// figures neither: they would count).
		if kept, ok := r.takeCancelled(in, stopped); ok {
			keepFigures(&out.Result, kept.Result)
		}
		return out
	}
	// A run whose results are not checked (a single call's: its
	// submitter checks it; a plan's from before the check) keeps the
	// figures as they came, as it keeps a finished result.
	keepFigures(&out.Result, stopped.Result)
	if stopped.TaskID != "" {
		out.Stopped = &SignedResult{Result: stopped.Result, Sig: stopped.Sig}
	}
	return out
}

// keepFigures sets r's usage, attempts and worker to from's.
func keepFigures(r *call.Result, from call.Result) {
	r.Usage, r.Attempts, r.Worker = from.Usage, from.Attempts, from.Worker
}

// stoppedChildStatus: a status a stopped child's result has (the cancel's
// details a worker signs).
func stoppedChildStatus(status string) bool {
	return status == dispatch.StatusCancelled || status == dispatch.StatusKilled
}

// takeCancelled is a cancelled call's result (the cancel's details) as
// the run takes it (false: it is not): a stopped child's, signed by a
// worker the run trusts for this very call, as a finished result is taken
// (resultGate.take). It is kept on the run (signed), so the submitter
// checks its figures again (ownFigures). A result from a worker that
// signs none is not taken.
func (r *activityRunner) takeCancelled(in CallInput, stopped *CallOutput) (CallOutput, bool) {
	if stopped.Sig == nil || !stoppedChildStatus(stopped.Status) {
		return CallOutput{}, false
	}
	kept := CallOutput{Result: stopped.Result, Sig: stopped.Sig}
	if r.gate.take(in, &kept) != nil || kept.Sig == nil {
		return CallOutput{}, false
	}
	r.signed(&kept)
	return kept, true
}

// stoppedFigures is the result a single call task's cancel came with
// (out.Stopped), as a worker key the submitter trusts signed it for the
// call's workflow run (wid, execution run) and the input brood's call
// workflow makes from start (briefRefusal), for its figures (false: none
// is, and none is shown: whoever ends a call on Temporal writes them).
func (e *Engine) stoppedFigures(task, wid, run string, start CallInputW, out *CallOutput) (call.Result, bool) {
	s := out.Stopped
	if s == nil || s.Sig == nil || out.Status != dispatch.StatusCancelled || !stoppedChildStatus(s.Result.Status) {
		return call.Result{}, false
	}
	kept := CallOutput{Result: s.Result, Sig: s.Sig}
	c := resultCall{Namespace: e.cfg.Namespace, Workflow: wid, Run: run, Submitter: e.fingerprint(), Task: task}
	if e.cfg.Workers.check(c, &kept) != nil || briefRefusal(task, start, &kept) != nil {
		return call.Result{}, false
	}
	return taken(kept.Result, kept.Sig), true
}
