package temporal

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	wf "github.com/broodhq/brood/internal/workflow"
)

// A chain step's word (review26 P1-3, P2-4). Whoever completes the run's
// workflow task chooses the task queue of a chain step, and whoever polls
// that queue answers it: its tip, what it says became of the change, and
// its failure's text. So the worker signs them (the tip with its list,
// root and outcome: TipSig v3; a failure: ChainFailure), and the workflow
// takes a step's tip and words only when a key of the run's signed worker
// set signed them for this execution, this step; else it keeps the tip it
// had and says brood's own sentence.

// checkedTipsVersion marks the runs whose workflow checks each chain
// step's tip and failure before it uses them (runs from before replay as
// they ran).
const checkedTipsVersion = "brood.plan.checked-tips"

// chainUnsigned is brood's reason for a chain step that failed with no
// failure a worker of the run signed.
const chainUnsigned = "the step that puts its change into the run's tree failed on Temporal with no failure a brood worker signed: its reason is not shown, since whoever fails an activity writes it"

// chainFailContext separates a chain failure's signature from any other
// use of a worker key.
const chainFailContext = "brood fleet worker chain failure v1\x00"

// ChainFailure is a chain step's failure as its worker signed it (the
// details of the step's ApplicationError).
type ChainFailure struct {
	Message string `json:"message"`
	Key     []byte `json:"key"`
	Worker  string `json:"worker,omitempty"`
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	Run     string `json:"run"`
	Sig     []byte `json:"sig"`
}

func chainFailClaimOf(ns, workflow, submitter string, f *ChainFailure) []byte {
	b, _ := json.Marshal(struct {
		Namespace, Workflow, Run, Submitter, Task, Worker, Message string
		Attempt                                                    int
	}{ns, workflow, f.Run, submitter, f.Task, f.Worker, f.Message, f.Attempt})
	return append([]byte(chainFailContext), b...)
}

// signChainFailure is how a chain step fails on err: the same failure
// (message, type, retryable or not) with its message signed for this
// step of this execution in its details. A cancel stays as it is; nil
// keys: err unchanged.
func (a *Activities) signChainFailure(ctx context.Context, in ChainInput, err error) error {
	var canceled *temporal.CanceledError
	if a.Keys == nil || err == nil || errors.As(err, &canceled) {
		return err
	}
	msg, typ, final := err.Error(), "", false
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		typ, final = app.Type(), app.NonRetryable()
		if app == err {
			msg = app.Message()
		}
	}
	info := infoOf(ctx)
	if in.Signed != nil && len(in.Signed.Key) > 0 {
		info.Submitter = Fingerprint(in.Signed.Key)
	}
	f := &ChainFailure{Message: msg, Key: a.Keys.own.Public().(ed25519.PublicKey), Worker: a.Worker, Task: in.TaskID, Attempt: info.Attempt, Run: info.Run}
	f.Sig = ed25519.Sign(a.Keys.own, chainFailClaimOf(info.Namespace, info.Workflow, info.Submitter, f))
	return temporal.NewApplicationErrorWithOptions(msg, typ, temporal.ApplicationErrorOptions{NonRetryable: final, Details: []any{f}})
}

// checkChainFailure: a key rt trusts signed f for the chain step of task
// c.Task in the execution c names.
func (rt *ResultTrust) checkChainFailure(c resultCall, f *ChainFailure) bool {
	return rt != nil && f != nil && c.Run != "" && f.Run == c.Run && f.Task == c.Task && len(f.Key) == ed25519.PublicKeySize &&
		rt.trust.trusts(f.Key) && ed25519.Verify(ed25519.PublicKey(f.Key), chainFailClaimOf(c.Namespace, c.Workflow, c.Submitter, f), f.Sig)
}

// signedChainFailure is the failure err carries signed (nil: none, or
// details of another kind).
func signedChainFailure(err error) (f *ChainFailure) {
	defer func() {
		if recover() != nil {
			f = nil
		}
	}()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.HasDetails() || app.Details(&f) != nil {
		return nil
	}
	return f
}

// stepCall is the resultCall a chain step of task answers (the gate's).
func (r *activityRunner) stepCall(task string) resultCall {
	c := r.gate.call
	c.Task = task
	return c
}

// chainFailed is brood's reason for the failed chain step of task (err):
// the failure's text only when a worker of the run signed it for the
// step (kept on the run for the submitter: RunInput.ChainFails), else
// brood's own sentence.
func (r *activityRunner) chainFailed(w workflow.Context, task string, err error) string {
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &canceled) || w.Err() != nil:
		return "the run was cancelled during its step"
	case errors.As(err, &timeout):
		return fmt.Sprintf("no worker finished the step: its activity ended with a %s timeout on Temporal", timeout.TimeoutType())
	}
	f := signedChainFailure(err)
	if !r.gate.rt.checkChainFailure(r.stepCall(task), f) {
		return chainUnsigned
	}
	if r.in.ChainFails == nil {
		r.in.ChainFails = map[string]ChainFailure{}
	}
	r.in.ChainFails[task] = *f
	return f.Message
}

// stepRefused is brood's reason for a chain step whose tip the workflow
// did not take (checkStep).
const stepRefused = "the tree its chain step came back with is not one a worker of the run signed for this step of this execution, grown from the run's start: something other than a brood worker answered the step (anyone who reaches the frontend can); the run's tree was left as it was"

// stepBeforeRoots is brood's reason for a step whose tip a worker from
// before tip roots signed (v2: the tree its chain started from unsigned).
const stepBeforeRoots = "the tree its chain step came back with is signed by a worker from before tip roots: upgrade every worker, then run the plan again; the run's tree was left as it was"

// checkStep is nil when step is the chain step of task as a key of the
// run's signed worker set signed it in this execution: its tip (v3, of
// this step, grown from the execution's start root); else the refusal,
// brood's own sentence (nothing of the step's text: checkTip's would name
// the key whoever answered chose).
func (r *activityRunner) checkStep(task string, step *ChainOutput) error {
	c := r.stepCall(task)
	s := step.Sig
	switch {
	case step.Tip == nil || s == nil || r.gate.rt.checkTip(c.Namespace, c.Workflow, c.Run, c.Submitter, step.Tip, s) != nil:
		return errors.New(stepRefused)
	case s.V < 3:
		return errors.New(stepBeforeRoots)
	case s.Task != task || s.Root != r.root:
		return errors.New(stepRefused)
	}
	return nil
}

// takeStep is what the chain step of task (step) makes of the run, in a
// run that checks its steps: its tip when checkStep takes it, the change
// applied when the tip's signed list names task, and the record's landed
// as the step's worker signed it; else the tip as it was, the change not
// applied, and brood's reason.
func (r *activityRunner) takeStep(task string, step *ChainOutput, patchKey string) (msg string, applied bool) {
	if err := r.checkStep(task, step); err != nil {
		return chainFailedPrefix + err.Error() + chainFailedKept + patchKey, false
	}
	r.in.Tip, r.in.TipSig = step.Tip, step.Sig
	return step.Sig.Step, slices.Contains(step.Sig.Tasks, task)
}

// ownChainReasons replaces, in every not-applied record of res, the
// reason of a failed chain step (landedWhy's) with brood's sentence
// unless it is one brood's workflow words or a failure fails names for
// its task that check verifies (review26 P1-3: a workflow from before the
// check, or whoever completed it, put any text there).
func ownChainReasons(res *wf.Result, fails map[string]ChainFailure, check func(task string, f *ChainFailure) bool) {
	if res == nil {
		return
	}
	for i := range res.Phases {
		for k := range res.Phases[i].Calls {
			ownChainReason(&res.Phases[i].Calls[k], fails, check)
		}
	}
}

// chainWhyPrefix is how landedWhy words a failed chain step's reason.
const chainWhyPrefix = "its change was not applied to the tree (it could not be put into the run's tree: "

// ownChainReason is ownChainReasons for one record.
func ownChainReason(c *wf.CallRecord, fails map[string]ChainFailure, check func(task string, f *ChainFailure) bool) {
	rest, ok := strings.CutPrefix(c.Error, chainWhyPrefix)
	if !ok || c.Status != wf.CallNotApplied {
		return
	}
	tail := "); " + wf.KeptWithTask(c.TaskID)
	i := strings.LastIndex(rest, tail)
	if i < 0 {
		i = strings.LastIndex(rest, "); ")
	}
	if i < 0 {
		i = len(rest)
	}
	why := rest[:i]
	if broodChainReason(why) {
		return
	}
	if f, ok := fails[c.TaskID]; ok && f.Message == why && check(c.TaskID, &f) {
		return
	}
	c.Error = chainWhyPrefix + chainUnsigned + rest[i:]
	if why != "" {
		c.Landed = strings.Replace(c.Landed, why, chainUnsigned, 1)
	}
}

// broodChainReason: why is a chain step's reason brood's workflow words
// itself (chainFailed, checkStep).
func broodChainReason(why string) bool {
	if why == chainUnsigned || why == stepRefused || why == stepBeforeRoots || why == "the run was cancelled during its step" {
		return true
	}
	t, ok := strings.CutPrefix(why, "no worker finished the step: its activity ended with a ")
	return ok && slices.Contains([]string{"StartToClose timeout on Temporal", "ScheduleToStart timeout on Temporal", "ScheduleToClose timeout on Temporal", "Heartbeat timeout on Temporal"}, t)
}
