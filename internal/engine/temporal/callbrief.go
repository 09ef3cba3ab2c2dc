package temporal

import (
	"cmp"
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/broodhq/brood/internal/dispatch"
)

// A single call's result answers the input its submitter sent
// (docs/scale-out.md, "The run's output is the submitter's own replay";
// review26 P2-3): the replay of a call's history does not compare the
// activity's input with the one brood's code makes (the SDK matches an
// activity by id and type only), so whoever completes the call's workflow
// tasks can schedule its activity with a spec of its own. A worker admits
// a signed submission's call only with its exact spec; an unsigned one
// (no fleet key, an --allow-unsigned worker) it runs as it comes, and
// signs the digest of the input it ran (callBind). The submitter knows
// the input exactly: the one CallWorkflow makes from the start input it
// sent (singleCallInput), and it takes a result only when its signature
// names that one (briefRefusal).

// singleCallInput is the input CallWorkflow schedules its one activity
// with, made from its start input in as activityRunner.run makes it (the
// call's number 1 of its execution, no plan key, the start's tree, its
// continuation when it is the call's own): what an honest worker signs
// the digest of (bindOf). TestSingleCallInputIsTheWorkflows ties the two.
func singleCallInput(in CallInputW) CallInput {
	c := CallInput{Spec: in.Spec, Signed: in.Signed, Seq: 1, Code: in.Code}
	if in.From != nil && in.From.TaskID == cmp.Or(in.Spec.Resume, in.Spec.TaskID) {
		hb := *in.From
		c.From = &hb
	}
	return c
}

// briefRefusal is nil when out, single call task's result as checked to
// be signed by a worker key the submitter trusts (ResultTrust.check),
// answers the input brood's call workflow makes from start, the call's
// start input; else the one-line refusal. An unsigned ending (no
// signature) answers nothing and needs none. A signature from before
// results named their input (v1, v2) is refused for a call whose
// submitter required bound results (start.Versions), and taken as it was
// for a call from before.
func briefRefusal(task string, start CallInputW, out *CallOutput) error {
	s := out.Sig
	if s == nil {
		return nil
	}
	b, want := s.bind(), bindOf(singleCallInput(start))
	switch {
	case b == (callBind{}) && start.Versions[boundResultsVersion] < 1:
		return nil
	case b == (callBind{}):
		return fmt.Errorf("the result of task %s is signed by a brood worker from before results named the input they answer, so it was not taken: upgrade every worker of the fleet, then run the call again", task)
	case b != want:
		return fmt.Errorf("the result of task %s was signed by worker key %s (worker %q) for another input than the one this submitter sent (%s): whoever completed the call's workflow tasks on Temporal scheduled it with a brief of its own, so it was not taken; check who can reach the namespace's frontend, sign your submissions (brood fleet keygen) so workers run only what you signed, and run the call again",
			task, Fingerprint(s.Key), printable(s.Worker), bindDiff(b, want))
	}
	return nil
}

// bindDiff says how the call a result was signed for (got) differs from
// the one the submitter sent (want).
func bindDiff(got, want callBind) string {
	switch {
	case got.Call != want.Call:
		return fmt.Sprintf("a plan's call %q, where a single call has none", printable(got.Call))
	case got.Seq != want.Seq:
		return fmt.Sprintf("call number %d, where a single call has %d", got.Seq, want.Seq)
	}
	return "its brief's digest is not the brief's this submitter sent"
}

// ownStart is the check a replay of task's single call makes of its start
// input before any of it runs (replayCall): the start must be a call of
// this very task that brood would run (callBounds) and, for a submitter
// with a key, a submission this key signed for it (ownCallInput), as a
// plan run's is (ownRunOutput): a start this key did not sign is
// whoever started it's, and is not replayed; without a key, one this
// checkout sent, where it kept their digests (sentBy). Its refusal is
// notMine.
func (e *Engine) ownStart(ctx context.Context, task, run string) func(CallInputW) error {
	return func(in CallInputW) error {
		if err := callBounds(task, in); err != nil {
			return notMine{err}
		}
		if _, err := e.ownCallInput(ctx, task, in); err != nil {
			return notMine{err}
		}
		if err := e.sentBy(ctx, task, in, run); err != nil { // keyless: one this checkout sent, where it kept them
			return notMine{err}
		}
		return nil
	}
}

// runningStart is the start input of execution exec of task's call
// workflow wid, which has not ended (nothing replays it yet), checked as
// a replay's is (ownStart): while a new execution someone else started
// runs, tasks show does not show it as the user's call (review31 P3-3).
func (e *Engine) runningStart(ctx context.Context, task, wid, exec string) (CallInputW, error) {
	var in CallInputW
	it := e.cfg.Client.GetWorkflowHistory(ctx, wid, exec, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return in, fmt.Errorf("task %s on Temporal: its running execution %s has no history yet", task, exec)
	}
	ev, err := it.Next()
	if err != nil {
		return in, fmt.Errorf("task %s on Temporal: read its running execution's start: %w", task, err)
	}
	start := ev.GetWorkflowExecutionStartedEventAttributes()
	if start == nil || e.cfg.DataConverter.FromPayloads(start.GetInput(), &in) != nil {
		return in, fmt.Errorf("task %s's running execution %s on Temporal was not started with a call's input: nothing of it is taken; check who can start workflows in namespace %s", task, exec, e.cfg.Namespace)
	}
	return in, e.ownStart(ctx, task, exec)(in)
}

// callBounds refuses a start input that is not one brood's Call makes for
// task: another task's spec, a fork or a conversation (which run only
// locally), a continuation of another task.
func callBounds(task string, in CallInputW) error {
	id := cmp.Or(in.Spec.Resume, in.Spec.TaskID)
	why := ""
	switch {
	case dispatch.CheckID(task) != nil:
		why = "its workflow names no task brood makes"
	case id != task:
		why = fmt.Sprintf("its call is task %q's", printable(id))
	case in.Spec.Fork || len(in.Spec.History) > 0:
		why = "its call carries a conversation, which brood runs only locally"
	case in.From != nil && in.From.TaskID != task:
		why = fmt.Sprintf("it continues task %q", printable(in.From.TaskID))
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("task %s's run on Temporal is not a call brood would start (%s): nothing of it is taken; check who can start workflows in the namespace, and run the call again", task, why)
}

// handOnRefusal is why hb, the last heartbeat of single call task's run
// started with start, is not handed on to a follow-up ("": it is): what it
// carries (the conversation, a partial change) must have been signed by
// its worker for the input brood's call workflow made from start, as its
// result must (briefRefusal), or a follow-up would continue a
// conversation of a brief the completer made (review28 P1-1). Required
// for a call whose submitter required bound results; for a call from
// before (in flight at an upgrade), of a heartbeat whose worker named the
// input it ran all the same (review30 P2-1, for single calls), and one
// whose worker did not (review31 P3-1: nothing checked its brief); an
// unsigned one is left to the worker, which continues none
// (WorkerKeys.check).
func handOnRefusal(task string, start CallInputW, hb *Heartbeat) string {
	if hb == nil || !carries(*hb) || hb.Signed == nil {
		return ""
	}
	s := hb.Signed
	if s.Brief == "" && start.Versions[boundResultsVersion] < 1 {
		// An old worker's heartbeat of a call from before: nothing named
		// the input it ran, and a completer could have re-briefed it, as
		// a plan run's stopped call from before (uncheckedStops).
		return fmt.Sprintf("task %s: its last run is from before brood checked continuations (its conversation on the fleet names no input, worker key %s), so nothing of it is continued: run the call again with brood subagent", task, Fingerprint(s.Key))
	}
	if s.Brief == bindOf(singleCallInput(start)).Brief {
		return ""
	}
	return fmt.Sprintf("task %s: its last run's conversation on the fleet was signed by worker key %s for another input than the one this submitter sent (or by a worker from before conversations named their input), so nothing of that run is continued: run the call again with brood subagent", task, Fingerprint(s.Key))
}
