package temporal

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// ChainActivityName is the activity that puts a writer's change into the
// run's tree.
const ChainActivityName = "brood.chain"

// ErrNoCodeCache: this worker cannot work on the submitter's tree (another
// may).
const ErrNoCodeCache = "brood.NoCodeCache"

// ChainInput is one step of a run's tree: a finished writer's change,
// made in the snapshot it started from, onto the run's tip.
type ChainInput struct {
	TaskID string             `json:"task_id"`
	Tip    *codesnap.Snapshot `json:"tip"`
	// TipSig is Tip's signature (the step that made it, this execution's):
	// the writers it names are in the new tip's signed list (tipTasks).
	TipSig *TipSig         `json:"tip_sig,omitempty"`
	Change codesnap.Change `json:"change"`
	// Signed is the run's signed submission: the worker checks it
	// before it touches its clone cache (Trust.AdmitChain).
	Signed *Signed `json:"signed,omitempty"`
	// Result is the writer's result as its worker signed it: a worker
	// with keys chains only the change of a result a key it trusts signed
	// for this call (WorkerKeys.signedChange), never Change's own.
	Result *SignedResult `json:"result,omitempty"`
}

// ChainOutput is the run's new tip and what became of the change.
type ChainOutput struct {
	Tip     *codesnap.Snapshot `json:"tip"`
	Chained codesnap.Chained   `json:"chained"`
	// Attempt is the step's attempt that did it (1 is the first).
	Attempt int `json:"attempt,omitempty"`
	// Sig is the worker's signature over Tip for this run (tipsig.go): the
	// submitter lands a tip only when a worker key it trusts signed it.
	Sig *TipSig `json:"sig,omitempty"`
}

// Chain is the chain activity (on a worker, which has the clone cache):
// index and objects only, no copy of the tree is written. Its failure is
// signed for the step (signChainFailure), so the workflow shows its reason
// only when a worker of the run's signed set gave it.
func (a *Activities) Chain(ctx context.Context, in ChainInput) (*ChainOutput, error) {
	stop := beatUntilStopped(ctx) // from the start: admission reads the store
	defer stop()
	out, err := a.chainStep(ctx, in)
	return out, a.signChainFailure(ctx, in, err)
}

// chainStep is Chain's step, its failure as it is.
func (a *Activities) chainStep(ctx context.Context, in ChainInput) (*ChainOutput, error) {
	if a.Trust != nil {
		if err := a.Trust.AdmitChain(ctx, a.Store, in, infoOf(ctx)); err != nil {
			return nil, a.refuse(ctx, err)
		}
		if err := a.claim(ctx, in.Signed, activity.GetInfo(ctx).WorkflowExecution.RunID); err != nil {
			return nil, claimError(err)
		}
	}
	info := infoOf(ctx)
	if in.Signed != nil && len(in.Signed.Key) > 0 {
		info.Submitter = Fingerprint(in.Signed.Key)
	}
	if a.Keys != nil {
		res, err := a.Keys.signedChange(info, in)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
		}
		in.Change.Result = res
	}
	if a.Code == nil {
		return nil, temporal.NewApplicationError("this worker has no code cache", ErrNoCodeCache)
	}
	from, prev, root, err := a.chainTip(ctx, info, in)
	if err != nil {
		return nil, admitError(err)
	}
	if err := a.claimChain(ctx, in, info, activity.GetInfo(ctx).ActivityID); err != nil {
		return nil, claimError(err)
	}
	tip, ch, err := a.Code.Cache.Chain(ctx, a.Code.Blobs, from, in.Change)
	if err != nil {
		return nil, err
	}
	sig := a.Keys.signTip(info, a.Worker, in.TaskID, tip, tipTasks(in.TaskID, prev, ch), root, ch.Message())
	return &ChainOutput{Tip: tip, Chained: *ch, Attempt: info.Attempt, Sig: sig}, nil
}

// tip is the run's tree as the calls that finished so far left it: where
// a call that starts now begins.
func (r *activityRunner) tip() *codesnap.Snapshot {
	if r.in.Tip != nil {
		return r.in.Tip
	}
	return r.in.Code
}

// chain puts a finished plan call's change into the run's tree, one change
// at a time in the order the calls finished (the way a local isolated
// writer's change lands in the tree when it ends), so the calls that start
// after it see it. A change that conflicts with what landed before it is
// left out, with the reason on the call's record; the patch stays in the
// store. A cancel of the run does not interrupt a step.
func (r *activityRunner) chain(w workflow.Context, start *codesnap.Snapshot, out *CallOutput) {
	if r.chainLock == nil || start == nil || len(out.Code) == 0 {
		return
	}
	switch out.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
	default:
		return
	}
	var res codesnap.Result
	if json.Unmarshal(out.Code, &res) != nil || res.Patch == nil {
		return
	}
	dc, _ := workflow.NewDisconnectedContext(w)
	if err := r.chainLock.Acquire(dc, 1); err != nil {
		return
	}
	defer r.chainLock.Release(1)
	l := r.limits(out.Agent)
	l.Heartbeat = r.limits("").Heartbeat
	ao := chainOptions(r.in.Queue, l, out.TaskID)
	in := ChainInput{TaskID: out.TaskID, Tip: r.tip(), TipSig: r.in.TipSig, Change: codesnap.Change{Start: start, Result: &res}, Signed: r.in.Signed}
	if out.Sig != nil {
		in.Result = &SignedResult{Result: out.Result, Sig: out.Sig}
	}
	var step ChainOutput
	msg := ""
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(dc, ao), ChainActivityName, in).Get(dc, &step); err != nil {
		why := finalMessage(err)
		if r.checkSteps {
			why = r.chainFailed(w, out.TaskID, err)
		}
		msg = chainFailedPrefix + why + chainFailedKept + res.Patch.Key
		out.Result.Patch = call.PatchNotApplied
		r.chainTries(out.TaskID, failedTries(err, ao))
	} else if r.checkSteps {
		r.chainTries(out.TaskID, step.Attempt)
		var applied bool
		msg, applied = r.takeStep(out.TaskID, &step, res.Patch.Key)
		out.Result.Patch = call.PatchNotApplied
		if applied {
			out.Result.Patch = call.PatchApplied
		}
	} else {
		r.chainTries(out.TaskID, step.Attempt)
		msg = step.Chained.Message()
		out.Result.Patch = call.PatchApplied
		if step.Chained.Conflict != "" {
			out.Result.Patch = call.PatchNotApplied
		}
		if step.Tip != nil {
			r.in.Tip, r.in.TipSig = step.Tip, step.Sig
		}
	}
	if r.in.Chained == nil {
		r.in.Chained = map[string]string{}
	}
	r.in.Chained[out.TaskID] = msg
}

// startOf is the snapshot a plan call starts from: a stopped writer
// continues in the one it began in (its change so far is against it);
// every other call begins at the run's tip.
func (r *activityRunner) startOf(from *Heartbeat) *codesnap.Snapshot {
	if from != nil && from.Code != nil {
		if s, ok := r.in.StoppedIn[from.TaskID]; ok && s != nil {
			return s
		}
	}
	return r.tip()
}

// chainOptions are a chain step's: it beats (beatUntilStopped) within the
// run's heartbeat timeout (l.Heartbeat), so a worker that dies in it is
// noticed then and the step moves to another, as a call does; with no
// heartbeat it waited out its 30 minutes while every listing said the run
// was running (issue 26, a tester's P1-2). Its attempts are its writer's
// calls' (l.Attempts, at most MaxAttempts: chaintries.go).
func chainOptions(queue string, l CallLimits, task string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    l.Heartbeat,
		Summary:             "the run's tree: the change of task " + task,
		Priority:            temporal.Priority{PriorityKey: 1},
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: chainAttempts(l)},
	}
}

// beatUntilStopped records the activity's heartbeat every third of its
// heartbeat timeout until stop is called (nothing where it has none): a
// chain step's; a call's beats carry its transcript (keepBeating).
func beatUntilStopped(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// The landing line of a writer whose chain step failed (not a conflict):
// chainFailedPrefix, the step's error, chainFailedKept, the patch's key.
const (
	chainFailedPrefix = "not in the run's tree (it could not be put there: "
	chainFailedKept   = "); its patch is in the store: "
)

// landedWhy gives a not-applied call whose chain step failed the step's
// error as its reason: the plan's record said its change "conflicts with
// what another call wrote there", which it did not (a worker that does not
// trust the submitter's key refused the step; issue 26, a tester's P1-1).
func landedWhy(c *wf.CallRecord, landed string) {
	rest, ok := strings.CutPrefix(landed, chainFailedPrefix)
	if !ok || c.Status != wf.CallNotApplied {
		return
	}
	if i := strings.LastIndex(rest, chainFailedKept); i >= 0 {
		rest = rest[:i]
	}
	c.Error = "its change was not applied to the tree (it could not be put into the run's tree: " + rest + "); " + wf.KeptWithTask(c.TaskID)
}
