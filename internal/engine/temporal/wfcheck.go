package temporal

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// Checked results inside the workflow (docs/scale-out.md, "Who a
// submitter trusts"): anyone who reaches the frontend can complete (or
// fail) a call's activity with a result of their making, and a plan's
// later phases fill their briefs from earlier calls' outputs, its
// until_quiet and votes aggregate them, its outputs name them. So the
// submitter signs the worker keys it takes results from into its
// submission (RunInput.Workers), and the plan's workflow uses a call's
// result only when one of them signed it for that call of this execution
// (ResultTrust.check: ed25519 is pure, so the check replays); any other
// is a failed call with brood's own reason, never the result's text. An
// activity that failed says why only through a failed result a trusted
// worker signed (Activities.Call); else brood says it.

// WorkerSet is the worker keys a submitter takes results from, as it
// signs them into a plan's submission (sorted, so the same set signs the
// same bytes).
type WorkerSet struct {
	Keys [][]byte `json:"keys"`
}

// workerSet is rt's keys (nil rt: nil, nothing checked).
func (rt *ResultTrust) workerSet() *WorkerSet {
	if rt == nil {
		return nil
	}
	ws := &WorkerSet{Keys: [][]byte{}}
	for k := range rt.trust.keys {
		ws.Keys = append(ws.Keys, []byte(k))
	}
	slices.SortFunc(ws.Keys, bytes.Compare)
	return ws
}

// trustsAll: rt trusts every key of ws (nil rt: none).
func (rt *ResultTrust) trustsAll(ws *WorkerSet) bool {
	if rt == nil || ws == nil {
		return false
	}
	for _, k := range ws.Keys {
		if !rt.trust.trusts(k) {
			return false
		}
	}
	return true
}

// resultTrust is the allowlist of ws's keys.
func (ws *WorkerSet) resultTrust() *ResultTrust {
	t := NewTrust()
	for _, k := range ws.Keys {
		if len(k) == ed25519.PublicKeySize {
			t.keys[string(k)] = "the run's signed submission"
		}
	}
	return NewResultTrust(t, "")
}

// checkedResultsVersion marks the runs whose workflow checks each call's
// result before it uses it (runs from before replay as they ran).
const checkedResultsVersion = "brood.plan.checked-results"

// boundResultsVersion marks the runs whose workflow uses a call's result
// only when its worker signed it for that very call (callBind: the plan
// call's key and number, the digest of its input); runs from before
// replay as they ran.
const boundResultsVersion = "brood.plan.bound-results"

// sigMemoKey is the workflow context's key of a submitter's replay's
// sigMemo (none on a worker).
type sigMemoKey struct{}

// boundStopsVersion marks the runs whose workflow keeps a stopped call's
// last heartbeat as its continuation only when its worker signed it for
// the input the workflow scheduled (activityRunner.stopped); runs from
// before replay as they ran.
const boundStopsVersion = "brood.plan.bound-stops"

// resultGate is a plan workflow's check of its calls' results (nil: none,
// a run whose submitter sent no worker keys, or from before the check).
type resultGate struct {
	rt *ResultTrust
	// call is where every result must be signed: this execution of the
	// run, for the submission's key (Task set per call).
	call resultCall
	// bound: a result must name the call it answers (boundResultsVersion).
	bound bool
	// briefs: a stopped call's heartbeat is its continuation only when
	// signed for the call's input (boundStopsVersion; activityRunner.stopped).
	briefs bool
}

// newResultGate is the gate of the run in, in this execution.
func newResultGate(w workflow.Context, in *RunInput) *resultGate {
	if in.Workers == nil || workflow.GetVersion(w, checkedResultsVersion, workflow.DefaultVersion, 1) < 1 {
		return nil
	}
	// The namespace and the workflow id as the submitter started the run
	// (a replayer names neither as the server does; a run started under
	// others than its input says has no result of its workers taken).
	info := workflow.GetInfo(w)
	c := resultCall{Namespace: cmp.Or(in.Namespace, info.Namespace), Workflow: cmp.Or(in.RunID, info.WorkflowExecution.ID), Run: info.WorkflowExecution.RunID}
	if in.Signed != nil && len(in.Signed.Key) > 0 {
		c.Submitter = Fingerprint(in.Signed.Key)
	}
	bound := workflow.GetVersion(w, boundResultsVersion, workflow.DefaultVersion, 1) >= 1
	briefs := workflow.GetVersion(w, boundStopsVersion, workflow.DefaultVersion, 1) >= 1
	rt := in.Workers.resultTrust()
	if m, ok := w.Value(sigMemoKey{}).(*sigMemo); ok {
		rt.memo = m // a submitter's replay: what it verifies, the submitter's own check does not verify again
	}
	return &resultGate{rt: rt, call: c, bound: bound, briefs: briefs}
}

// take is out as the workflow uses it: itself when a trusted worker
// signed it for this call of this execution (in: the call as the
// workflow scheduled it, whose key, number and input the signature must
// name: boundTo); an unsigned ending (failed, killed, cancelled) with
// brood's own reason and nothing of its text; else a failed call with
// brood's reason. untrusted: the refused result when a key the submitter
// does not trust signed it for this very call (kept on the run, so the
// submitter names that key from a signature it verifies itself, never
// from the record's text).
func (g *resultGate) take(in CallInput, out *CallOutput) (untrusted *SignedResult) {
	spec := in.Spec
	task := cmp.Or(spec.Resume, spec.TaskID)
	c := g.call
	c.Task = task
	err := g.rt.check(c, out)
	if err == nil && out.Sig != nil {
		err = g.boundTo(in, out)
	}
	switch {
	case err == nil && out.Sig != nil:
		return nil
	case err == nil:
		*out = CallOutput{Result: endedUnsigned(task, spec.Agent, out.Status), Last: out.Last}
	default:
		if out.TaskID == task && out.Sig != nil && !g.rt.trust.trusts(out.Sig.Key) && g.signedForThisCall(out) {
			untrusted = &SignedResult{Result: out.Result, Sig: out.Sig}
		}
		*out = CallOutput{Result: call.Result{TaskID: task, Agent: spec.Agent, Status: dispatch.StatusFailed, Error: g.refusal(task, out)}}
	}
	return untrusted
}

// refusal is brood's reason for a result that failed g's check: nothing
// of the result's own text (its worker's name is the completer's). A
// result a key the submitter does not trust signed for this very call is
// an honest worker's, likely, not yet trusted: the reason names its whole
// key and how to trust it.
func (g *resultGate) refusal(task string, out *CallOutput) string {
	var what string
	s := out.Sig
	switch {
	case out.TaskID != task:
		what = "for another task"
	case s == nil || len(s.Key) == 0:
		what = "signed by no brood worker"
	case g.bound && g.rt.trust.trusts(s.Key) && g.signedForThisCall(out) && s.bind() == (callBind{}):
		return unboundReason(task, g.call.Workflow)
	case g.bound && g.rt.trust.trusts(s.Key) && g.signedForThisCall(out):
		what = "signed by worker key " + Fingerprint(s.Key) + " for another call of this run"
	case !g.rt.trust.trusts(s.Key) && g.signedForThisCall(out):
		key := FormatPublicKey(ed25519.PublicKey(s.Key), "")
		return fmt.Sprintf("the result of task %s is signed by worker key %s (%s), which this run's submitter does not trust, so the run did not use it: if it is the key your fleet's worker printed when it started, trust it with: brood fleet trust-worker '%s', then brood workflow resume %s", task, Fingerprint(s.Key), key, key, g.call.Workflow)
	default:
		what = "not what worker key " + Fingerprint(s.Key) + " signed for this call of this execution"
	}
	return fmt.Sprintf("the result of task %s that came back on Temporal is %s: something other than a worker this run trusts completed the call (anyone who reaches the frontend can), so the run did not use it", task, what)
}

// signedForThisCall: out's signature is good for this call of this
// execution, whoever's key made it.
func (g *resultGate) signedForThisCall(out *CallOutput) bool {
	s := out.Sig
	c := g.call
	return s.Run == c.Run && g.rt.memo.sigVersion(c.Namespace, c.Workflow, c.Submitter, &out.Result, s) > 0
}

// boundTo is nil when out's signature names the call in (a run from
// before bound results: any); else why not. Run after check, which
// verified the signature.
func (g *resultGate) boundTo(in CallInput, out *CallOutput) error {
	if !g.bound {
		return nil
	}
	switch b := out.Sig.bind(); {
	case b == (callBind{}):
		return errors.New("unbound")
	case b != bindOf(in):
		return errors.New("another call's")
	}
	return nil
}

// unboundReason is brood's reason for a result of task whose worker named
// no call it answers (a worker from before v3 signatures) in a run that
// takes only results that do (run: the run's id).
func unboundReason(task, run string) string {
	return fmt.Sprintf("the result of task %s is signed by a brood worker from before results named the call they answer, so the run did not use it: upgrade every worker of the fleet, then brood workflow resume %s", task, run)
}

// endedUnsigned is an ending no worker signed (whoever completes a call's
// activity can end it so): its status, with brood's reason; nothing of
// it kept, its usage and attempts neither (they would be shown, and count
// against the plan's max_tokens).
func endedUnsigned(task, agent, status string) call.Result {
	return call.Result{TaskID: task, Agent: agent, Status: status,
		Error: fmt.Sprintf("the call ended %s on Temporal with no result a brood worker signed: its reason is not shown, since whoever ends a call on Temporal writes it", status)}
}

// cancelled is brood's reason for a call whose activity was cancelled:
// the run's cancel only when the run was.
func cancelled(w workflow.Context) string {
	if w.Err() != nil {
		return "the run was cancelled during this call"
	}
	return "the call's activity was cancelled on Temporal"
}

// timeoutReason is brood's reason for a call whose activity timed out: its
// type alone, never its cause (the last attempt's failure, which whoever
// failed it wrote).
func timeoutReason(timeout *temporal.TimeoutError) string {
	return fmt.Sprintf("no worker finished the call: its activity ended with a %s timeout on Temporal", timeout.TimeoutType())
}

// signedEnding is the failed result a single call's activity failure
// carries signed (Activities.signFailure) for the call (nil: none, or a
// refusal, which fails the call's workflow): passed on with its
// signature for the submitter to check; the workflow trusts no key.
func signedEnding(spec call.Spec, err error) *CallOutput {
	var app *temporal.ApplicationError
	var out CallOutput
	if !errors.As(err, &app) || isRefusal(app) || !app.HasDetails() || app.Details(&out) != nil {
		return nil
	}
	if out.Sig == nil || !ending(out.Status) || out.TaskID != cmp.Or(spec.Resume, spec.TaskID) {
		return nil
	}
	return &out
}

// failed is the result of an activity that did not complete, as the
// workflow uses it: the failed result its last attempt's worker signed
// (Activities.Call) when a trusted one did (with its signature), else
// brood's own sentence — the timeout that ended it, the run's cancel, or
// that no brood worker signed a reason; never the failure's own text.
// refused: the activity was refused (the executor records the call failed
// with its error).
func (g *resultGate) failed(w workflow.Context, in CallInput, err error) (out *CallOutput, refused bool) {
	spec := in.Spec
	task := cmp.Or(spec.Resume, spec.TaskID)
	res := call.Result{TaskID: task, Agent: spec.Agent, Status: dispatch.StatusFailed}
	var app *temporal.ApplicationError
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &canceled) || w.Err() != nil:
		res.Status, res.Error = dispatch.StatusCancelled, cancelled(w)
		return &CallOutput{Result: res}, false
	case errors.As(err, &timeout):
		// The timeout's cause is the last attempt's failure: whoever
		// failed it wrote that; its type alone is said.
		res.Status, res.Error = dispatch.StatusKilled, timeoutReason(timeout)
		return &CallOutput{Result: res}, false
	case errors.As(err, &app) && app.HasDetails():
		var signed CallOutput
		if app.Details(&signed) == nil && signed.Sig != nil && ending(signed.Status) {
			c := g.call
			c.Task = task
			if g.rt.check(c, &signed) == nil && g.boundTo(in, &signed) == nil {
				return &CallOutput{Result: signed.Result, Sig: signed.Sig}, isRefusal(app)
			}
		}
	}
	res.Error = "the call's activity failed on Temporal with no failure a brood worker signed: its reason is not shown, since whoever fails an activity writes it"
	return &CallOutput{Result: res}, app != nil && isRefusal(app)
}

// broodEndings are the reasons the plan's workflow writes itself for a
// call that ended with no signed result (resultGate, failedCall,
// the executor's cancel): what the submitter shows of an unsigned
// ending's record; any other text is the record's writer's. None names a
// key: the trust-worker sentence is the submitter's own, from a refused
// result whose signature it verified (untrustedReason), never a record's.
var broodEndings = regexp.MustCompile(`^(?:stopped with the run \(the task ended (?:failed|killed|cancelled)\) )?(?:` +
	`the result of task [0-9A-Z]{26} that came back on Temporal is (?:for another task|signed by no brood worker|signed by worker key SHA256:[A-Za-z0-9+/]{43}, which this run's submitter does not trust|not what worker key SHA256:[A-Za-z0-9+/]{43} signed for this call of this execution|signed by worker key SHA256:[A-Za-z0-9+/]{43} for another call of this run): something other than a worker this run trusts completed the call \(anyone who reaches the frontend can\), so the run did not use it` +
	`|the result of task [0-9A-Z]{26} is signed by a brood worker from before results named the call they answer, so the run did not use it: upgrade every worker of the fleet, then brood workflow resume [A-Za-z0-9_.-]+` +
	`|the call ended (?:failed|killed|cancelled) on Temporal with no result a brood worker signed: its reason is not shown, since whoever ends a call on Temporal writes it` +
	`|no worker finished the call: its activity ended with a (?:StartToClose|ScheduleToStart|ScheduleToClose|Heartbeat) timeout on Temporal` +
	`|the call's activity failed on Temporal with no failure a brood worker signed: its reason is not shown, since whoever fails an activity writes it` +
	`|` + regexp.QuoteMeta(cancelledUnshown) +
	`|the run was cancelled during this call|the call's activity was cancelled on Temporal|the run was cancelled before this call started` +
	`|the run was cancelled|max_agents \(\d+\) reached: no new agent starts|max_tokens \(\d+\) reached after \d+ tokens: no new agent starts)$`)

// cancelledUnshown is the submitter's reason for a cancelled call whose
// record does not say one of brood's (callsig.go: ownReason): the result
// its worker signed gives its figures alone, never its child's words.
const cancelledUnshown = "the call ended cancelled on the fleet: its reason is not shown, since its child or whoever completes the run on Temporal writes it"

// dependsOn is the executor's reason for a call skipped because a task it
// depends on yielded nothing (without the other task's ending, which its
// own record says).
var dependsOn = regexp.MustCompile(`^it depends on task [A-Za-z0-9_.-]+, which yielded no result`)

// unsignedEnding is the reason the submitter shows for a record (who:
// "task T", or "call KEY" when it names none) that ended status with no
// signed result behind it: its own when it is one brood's workflow
// writes, else brood's sentence.
func unsignedEnding(who, status, reason string) string {
	if reason == "" || broodEndings.MatchString(reason) {
		return reason
	}
	if dep := dependsOn.FindString(reason); dep != "" {
		return dep // the executor's; what it says of the other task is that task's record's
	}
	return fmt.Sprintf("%s ended %s on the fleet with no result a brood worker signed: its reason is not shown, since whoever ends a call or completes the run on Temporal writes it", who, status)
}

// ending: a status a failed activity's signed result may have.
func ending(status string) bool {
	return status == dispatch.StatusFailed || status == dispatch.StatusKilled || status == dispatch.StatusCancelled
}

// signFailure is how the worker's attempt fails on err: the same failure
// (message, type, retryable or not), its details a failed result for the
// call with err's reason (or the child's own result where the failure
// carries one), signed with the worker's key, so the workflow shows the
// real reason of a real failure and no one else's. A cancel stays as it
// is (the workflow says it itself); nil keys: err unchanged.
func (a *Activities) signFailure(ctx context.Context, in CallInput, err error) error {
	var canceled *temporal.CanceledError
	if a.Keys == nil || err == nil || errors.As(err, &canceled) {
		return err
	}
	msg, typ, final := err.Error(), "", false
	var app *temporal.ApplicationError
	var r call.Result
	if errors.As(err, &app) {
		typ, final = app.Type(), app.NonRetryable()
		if app == err {
			msg = app.Message()
		}
		if d := childResult(app); d != nil {
			r = *d
		}
	}
	task := cmp.Or(in.Spec.Resume, in.Spec.TaskID)
	if r.TaskID != task || !ending(r.Status) {
		r = call.Result{TaskID: task, Agent: in.Spec.Agent, Status: dispatch.StatusFailed}
	}
	r.Error = cmp.Or(r.Error, msg)
	out := &CallOutput{Result: r}
	a.Keys.signResult(callInfo(ctx, in), a.Worker, out)
	return temporal.NewApplicationErrorWithOptions(msg, typ, temporal.ApplicationErrorOptions{NonRetryable: final, Details: []any{out}})
}

// childResult is the child's result an attempt's failure carries (the
// worker's own failures carry a *call.Result, or none).
func childResult(app *temporal.ApplicationError) (r *call.Result) {
	defer func() {
		if recover() != nil { // details of another type: none
			r = nil
		}
	}()
	if app.HasDetails() && app.Details(&r) != nil {
		return nil
	}
	return r
}
