package temporal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/taskdir"
)

// Activities is a worker's side of an agent call: it runs the real child
// through the worker's one call path (its Dispatcher), turns the child's
// pings into heartbeats, keeps the transcript in the fleet's store as it
// grows, and continues a call another worker started.
type Activities struct {
	// Runner runs one call (the worker's Dispatcher).
	Runner call.Runner
	// ProjectRoot is where Runner keeps its task directories.
	ProjectRoot string
	// Store is the fleet's shared store.
	Store Store
	// Worker names this worker in heartbeats (host:pid).
	Worker string
	// UploadEvery bounds how often a growing transcript is uploaded
	// (default 2s).
	UploadEvery time.Duration
	// Code runs calls that carry the submitter's tree in a copy of it
	// (nil: such calls are refused).
	Code *CodeSite
	// Client sends the attempts' heartbeats, each by one synchronous RPC
	// (durable.go; NewWorker sets it to the worker's). Nil: the SDK's
	// throttled heartbeats only.
	Client client.Client
	// Heartbeat is how often an attempt's signs of life reach the server
	// at most (NewWorker sets it to WorkerOptions.Heartbeat; 0: 0.8 of the
	// activity's heartbeat timeout).
	Heartbeat time.Duration
	// Trust is the allowlist of submitter keys (signcheck.go): a call not
	// signed by one of them is refused before anything runs. nil: not
	// checked (tests that embed a worker); brood worker always sets one.
	Trust *Trust
	// Keys are the worker's own key, which signs every heartbeat's
	// continuation, and the other workers' it continues calls of
	// (workerkey.go). nil: nothing signed nor checked (tests that embed a
	// worker); brood worker always sets them.
	Keys *WorkerKeys
	// BeforeResult, when set, runs after a call's child ended and before
	// its result is recorded: a fault test stops the worker there (brood
	// worker sets it from BROOD_TEST_HOLD_BEFORE_RESULT only).
	BeforeResult func(ctx context.Context)
	// Times, when set, keeps a breakdown of every call's time (a
	// benchmark's; calltimes.go).
	Times *CallTimes

	// claimed caches the runs this worker saw claim their submission
	// (replay.go).
	claimed sync.Map
	// swept is when this worker last swept its kept changes (UnixNano;
	// pickup.go).
	swept atomic.Int64
}

// Call is the agent-call activity. Every result it returns is signed
// with the worker's key for this call (resultsig.go): the submitter takes
// no other; so is the failed result a failure carries (signFailure).
//
// A call whose final answer is named in the store, not by a heartbeat
// (answername.go), is completed by the attempt itself, the completion
// retried as a durable heartbeat is (completeNamed): the server heard
// nothing of the call since its start, and a completion the SDK gives up
// on during a server restart would leave the call to its heartbeat
// timeout and a second attempt.
func (a *Activities) Call(ctx context.Context, in CallInput) (*CallOutput, error) {
	var named bool
	out, err := a.call(ctx, in, &named)
	if err == nil && out != nil {
		a.Keys.signResult(callInfo(ctx, in), a.Worker, out)
		if named && a.completeNamed(ctx, out) {
			return nil, activity.ErrResultPending
		}
	}
	return out, a.signFailure(ctx, in, err)
}

// call runs the call; named says its result goes with an answer named in
// the store and no result heartbeat (beater.finish).
func (a *Activities) call(ctx context.Context, in CallInput, named *bool) (out *CallOutput, err error) {
	defer func() { stampStart(ctx, out) }()
	lp, timed := a.Times.begin(activity.GetInfo(ctx).ScheduledTime)
	defer timed()
	if err := a.admit(ctx, in); err != nil {
		return nil, a.refuse(ctx, err)
	}
	if err := a.claim(ctx, in.Signed, activity.GetInfo(ctx).WorkflowExecution.RunID); err != nil {
		return nil, claimError(err)
	}
	ai := activity.GetInfo(ctx)
	if err := a.admitSeq(ctx, in, ai.WorkflowExecution.RunID, ai.ActivityID, int(ai.Attempt)); err != nil {
		return nil, claimError(err)
	}
	lp.mark("admit and claim")
	spec := in.Spec
	info := callInfo(ctx, in)
	spec.Submitter = submitterOf(info)
	hb, followUp, dropped, err := resumePoint(ctx, in, a.Keys)
	if err != nil {
		return nil, a.refuseFrom(ctx, err)
	}
	answer := a.answerKey(ctx, in)
	if named, ok := a.namedAnswer(ctx, answer, info, cmp.Or(spec.Resume, spec.TaskID), hb); ok && takesNamed(hb, followUp, named) {
		// An earlier attempt's final answer (answername.go): the
		// transcript has the follow-up, if any, and ends with the answer.
		hb, followUp, dropped = named, false, nil
	}
	// Checked: what it hands on is this worker's to vouch for now.
	a.Keys.sign(info, &hb)
	if err := sameTask(spec, hb); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	id := cmp.Or(hb.TaskID, spec.Resume, spec.TaskID)
	if id != "" {
		if err := dispatch.CheckID(id); err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
		}
		if err := askedFor(a.ProjectRoot, id, spec); err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
		}
		// A call that finished on a worker that died before it could say
		// so: its result, never a second run.
		if r, ok := a.finished(ctx, id, hb.Result); ok {
			return &CallOutput{Result: *r, Last: &hb}, nil
		}
	}
	if err := checkCode(in, hb); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	if err := a.followUpOnce(thisCall(ctx), id, hb, followUp); err != nil {
		return nil, err
	}
	note := ""
	if dropped != nil {
		note = startedOver(info.Attempt, dropped, a.hasTask(id))
	}
	spec, cleanup, err := a.continuation(ctx, spec, hb, followUp, in.Code != nil && !a.readOnly(spec))
	if isUnbound(err) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	} else if err != nil {
		return nil, err
	}
	defer cleanup()
	ask := followUpAt(a.ProjectRoot, id, spec, hb, followUp)
	lp.mark("checks and continuation")
	runner := a.Runner
	// The child's context: the attempt's, or ended by its sender (the
	// server refuses its heartbeats, a turn cannot be made durable).
	cctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	beats := a.newSender(ctx, abort)
	// Until the child's first line the attempt says it is alive itself:
	// making the copy of a large tree, the call's set-up and the child's
	// start (a mount and a re-exec under Landlock on a loaded worker) can
	// outlast the heartbeat timeout. From then on the child's pings do.
	stop := keepBeating(ctx, beats, hb)
	defer stop()
	if out, err := a.pickUp(ctx, in, spec, hb); out != nil || err != nil { // finished here after its attempt was given up
		return out, err
	}
	cp, err := a.materialise(cctx, in, id, hb, &spec)
	if err != nil {
		return nil, fmt.Errorf("materialise the submitter's tree: %w", err)
	}
	if cp != nil {
		defer cp.co.Cleanup()
		runner = cp.runner
	}
	lp.mark("copy and its dispatcher")
	b := newBeater(ctx, a, beats, id, cp, hb, ask, info)
	b.first = func() { lp.mark("child: to its first line"); stop() }
	spec.Watch.Alive, spec.Watch.Turn = b.alive, b.turn
	if answer != "" {
		b.answer, spec.Watch.Final = answer, b.finalTurn
	}
	a.forgetChange(ctx, id)
	if cp != nil && !cp.ro {
		defer a.holdTaking(ctx, id)() // until its change is kept (changelost.go)
	}
	r, err := runner.Call(cctx, spec)
	lp.mark("child: first line to end")
	if r != nil {
		a.Times.spawnStages(a.ProjectRoot, r.TaskID)
	}
	stop()
	b.stop()
	if a.BeforeResult != nil {
		a.BeforeResult(ctx)
	}
	if err == nil {
		// Taken and kept even when the attempt is gone: a later attempt
		// that finds the task finished here returns it (pickup.go).
		if cerr := a.change(ctx, cp, r); cerr != nil {
			r.Failures = append(r.Failures, cerr.Error())
		} else if cp != nil && !cp.ro {
			// (A read-only call by the worker's definitions has no
			// change: a later attempt that finds its task finished goes
			// the usual way, pickUp.)
			a.keepChange(ctx, r)
		}
	}
	lp.mark("change")
	if r != nil {
		// The task's runs on the fleet: this attempt's and the earlier
		// ones' (whose turns its transcript, and so its usage, carries).
		r.Attempts += max(int(activity.GetInfo(ctx).Attempt)-1, 0)
		r.Worker = a.Worker // stored with the result: a retry that returns it names this worker
	}
	b.finish(r)
	lp.mark("result durable")
	if err := beats.endedHere(ctx, r, err); err != nil {
		return nil, err
	}
	if errors.Is(err, dispatch.ErrTaskBusy) {
		// An earlier attempt's child on this worker still holds the task
		// (its attempt given to another worker, then back here): told it
		// is gone at its next sync point, it stops; a later attempt
		// continues the task.
		return nil, temporal.NewApplicationError(err.Error(), ErrTaskBusy)
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	if err := unfinished(ctx, b, r, func(o *CallOutput) { a.Keys.signResult(info, a.Worker, o) }); err != nil {
		return nil, err
	}
	last := b.hb
	last.Result = Ref{}
	a.Keys.sign(info, &last)
	if note != "" {
		r.Text += "\n\n[brood: " + note + "]"
	}
	*named = b.byRecord
	return &CallOutput{Result: *r, Last: &last}, nil
}

// resumePoint is where this attempt starts from: the attempt's own last
// heartbeat, or where an earlier, cancelled execution of the run left the
// call (in.From), or nothing; and whether the call's follow-up prompt (a
// resume that is not a pick-up) is still to be sent: once, as a retry of
// its attempt continues what that attempt began.
//
// Either is taken only when a worker key this one trusts signed it for
// this call (keys.check): a From that is not is refused; heartbeat details
// that are not are dropped, and the attempt starts the call over from its
// signed brief (or its records here), and dropped says why (for its
// result).
func resumePoint(ctx context.Context, in CallInput, keys *WorkerKeys) (hb Heartbeat, followUp bool, dropped, err error) {
	spec := in.Spec
	info := callInfo(ctx, in)
	followUp = spec.Resume != "" && !spec.Continue
	var from Heartbeat
	if in.From != nil && in.From.TaskID == cmp.Or(spec.Resume, spec.TaskID) {
		if err := keys.check(info, *in.From, true); err != nil {
			return hb, false, nil, untrustedFrom(err)
		}
		from = *in.From
	}
	held := activity.HasHeartbeatDetails(ctx)
	if held {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
		if err := keys.check(info, hb, false); err != nil {
			dropped, held = err, false
			if e, ok := err.(*unsignedError); ok && carries(from) {
				e.resumed = true
			}
		} else if !carries(hb) && carries(from) {
			// Details that hand on nothing (a task id alone, which
			// anyone can heartbeat by id) never replace where the
			// resume began: an honest attempt's name it until it
			// uploads a transcript of its own.
			held = false
		}
	}
	if held {
		// An attempt's heartbeats name a transcript of their own only once
		// it has the follow-up (beater.upload): while they name none, or
		// the one the call started from, the follow-up is still to be
		// sent, never an earlier answer returned for it.
		followUp = followUp && (hb.TaskID == "" || hb.Transcript == from.Transcript)
	} else {
		hb = from
	}
	if hb.TaskID == "" && spec.Resume == "" && (info.Attempt > 1 || dropped != nil) {
		// A retry of an attempt that died before its first heartbeat (or
		// whose heartbeat is dropped): the same task, continued from its
		// directory where it has one here.
		hb.TaskID = spec.TaskID
	}
	return hb, followUp, dropped, nil
}

// hasTask reports whether this worker has records of task id (a call
// continues from them).
func (a *Activities) hasTask(id string) bool {
	td, err := taskdir.Open(a.ProjectRoot).Task(id)
	return id != "" && err == nil && td.Has(taskdir.Envelope)
}

// sameTask checks that the heartbeat an attempt continues from names the
// call's own task: an earlier attempt's heartbeats are whoever ran it's
// (an impostor worker's, say), and naming another task would have this
// one run or return that task for the call.
// A partial change comes only with the transcript it was uploaded with,
// whose first line names it (checked where the transcript is read).
func sameTask(spec call.Spec, hb Heartbeat) error {
	if own := cmp.Or(spec.Resume, spec.TaskID); own != "" && hb.TaskID != "" && hb.TaskID != own {
		return unbound("the call is task %s and the heartbeat it continues from names task %s: a call continues only its own task", own, hb.TaskID)
	}
	if hb.Code != nil && (hb.TaskID == "" || hb.Transcript.IsZero()) {
		return unbound("the heartbeat the call continues from names a partial change and no transcript of its task uploaded with it: a call continues only from its own task's change")
	}
	return nil
}

// checkCode checks the submitter's snapshot and an earlier attempt's change
// here, on the worker (object ids, branch, subdir, store refs): a submitter
// is hostile, and its own checks ran in its own process.
func checkCode(in CallInput, hb Heartbeat) error {
	if in.Code != nil {
		if err := in.Code.Check(); err != nil {
			return err
		}
	}
	return hb.Code.Check()
}

// unfinished is how an attempt whose child did not end with a result
// fails (nil: it ended with one). A call whose child ended with a result
// is returned as it ended, even when the attempt's context ended meanwhile
// (a cancel that came too late, the SDK cancelling the attempt after a
// heartbeat failed): its result is in the store and named on the server
// already. A cancelled call's result goes with the cancel signed (sign):
// its figures, the turns it paid for, count in the cancelled run.
func unfinished(ctx context.Context, b *beater, r *call.Result, sign func(*CallOutput)) error {
	if !stoppedChild(r) {
		return nil
	}
	stopping := false
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		stopping = true
	default:
	}
	switch {
	case !stopping && ctx.Err() != nil && b.hb.TaskID != "":
		// Cancelled: the last heartbeat goes into the history with the
		// result, so a resume continues the call from its transcript on
		// any worker. The result is signed as a finished one is, so the
		// submitter counts what the call spent (issue 26 F6); a
		// submitter from before reads its call.Result part.
		if r == nil {
			return temporal.NewCanceledError(r, b.hb)
		}
		out := &CallOutput{Result: *r}
		sign(out)
		return temporal.NewCanceledError(out, b.hb)
	case stopping && ctx.Err() != nil:
		// The worker is shutting down under the call: another one
		// continues it from the transcript.
		return temporal.NewApplicationErrorWithOptions("the worker stopped during the call", ErrWorkerStopped, temporal.ApplicationErrorOptions{Details: []any{r}})
	case r.Process != nil && r.Process.KilledBy == pool.KilledByLifeguard:
		return temporal.NewApplicationErrorWithOptions(fmt.Sprintf("task %s: the lifeguard killed the child after %s of silence", r.TaskID, activity.GetInfo(ctx).HeartbeatTimeout), ErrChildSilent, temporal.ApplicationErrorOptions{Details: []any{r}})
	}
	return nil
}

// stoppedChild reports whether a call's child was stopped (or never
// started) rather than ending with a result.
func stoppedChild(r *call.Result) bool {
	return r == nil || r.Status == dispatch.StatusCancelled || r.Status == dispatch.StatusKilled
}

// finished is a call's result as a worker left it in the store.
func (a *Activities) finished(ctx context.Context, id string, ref Ref) (*call.Result, bool) {
	if ref.IsZero() {
		return nil, false
	}
	b, err := a.Store.ReadAll(ctx, ref)
	if err != nil {
		return nil, false
	}
	var r call.Result
	if json.Unmarshal(b, &r) != nil || r.TaskID != id {
		return nil, false
	}
	return &r, true
}

// syncTranscript makes the task's transcript here the one the server's
// heartbeat names, when it names one and the two differ: a call continues
// from its last durable turn boundary, with the copy of that boundary
// (Materialise's Partial: hb.Code), not from what this worker's records
// hold — behind it when another worker took the call further after this
// one was stopped past its heartbeat timeout (its finished turns would be
// asked again), or ahead of it by a turn that never reached its boundary
// (tool results whose edits the copy lacks).
func (a *Activities) syncTranscript(ctx context.Context, td *taskdir.Dir, hb Heartbeat) error {
	if hb.Transcript.IsZero() {
		return nil
	}
	if local, err := td.ReadFile(taskdir.Session, 0); err == nil && isTranscript(hb.Transcript, td.ID(), hb.Code, local) {
		return nil
	}
	obj, err := a.Store.ReadAll(ctx, hb.Transcript)
	if err != nil {
		return fmt.Errorf("fetch the transcript of task %s: %w", td.ID(), err)
	}
	b, err := transcriptOf(td.ID(), hb.Code, hb.Transcript, obj)
	if err != nil {
		return err
	}
	if err := td.WriteFile(taskdir.Session, b, true); err != nil {
		return fmt.Errorf("continue task %s: %w", td.ID(), err)
	}
	return nil
}

// continuation turns the spec of a call that an earlier attempt (or an
// earlier execution of the run, or an earlier workflow of the task) started
// into one that continues it: from the task's own directory when this
// worker ran it, else from the transcript in the store, else from the start
// under the same task id. A follow-up prompt (brood tasks resume) is the
// next turn; otherwise the child is told it was interrupted. copied: the
// call runs in a fresh copy of the submitter's tree that its tools may
// change, a writer's (cutToCopy).
func (a *Activities) continuation(ctx context.Context, spec call.Spec, hb Heartbeat, followUp, copied bool) (call.Spec, func(), error) {
	nop := func() {}
	id := cmp.Or(hb.TaskID, spec.Resume)
	if id == "" || !(hb.TaskID != "" || spec.Continue) {
		return spec, nop, nil
	}
	if td, err := taskdir.Open(a.ProjectRoot).Task(id); err == nil && td.Has(taskdir.Envelope) {
		if err := a.syncTranscript(ctx, td, hb); err != nil {
			return spec, nop, err
		}
		if copied && spec.Resume == "" && hb.Transcript.IsZero() {
			if err := cutToCopy(td); err != nil {
				return spec, nop, err
			}
		}
		spec.Resume, spec.Continue, spec.TaskID = id, !followUp, ""
		return spec, nop, nil
	}
	next := ""
	if followUp {
		next = spec.Prompt
	}
	spec.Resume, spec.Continue, spec.TaskID = "", false, id
	if hb.Transcript.IsZero() {
		// It never got far enough to upload (or ran in an earlier
		// execution of the run, elsewhere): it starts here, same task id.
		return spec, nop, nil
	}
	obj, err := a.Store.ReadAll(ctx, hb.Transcript)
	if err != nil {
		return spec, nop, fmt.Errorf("fetch the transcript of task %s: %w", id, err)
	}
	b, err := transcriptOf(id, hb.Code, hb.Transcript, obj)
	if err != nil {
		return spec, nop, err
	}
	path, cleanup, err := continuedTranscript(a.ProjectRoot, id, b)
	if err != nil {
		return spec, nop, fmt.Errorf("continue task %s: %w", id, err)
	}
	spec.Transcript, spec.NextTurn = path, next
	return spec, cleanup, nil
}

// continuedFile is where a continued call's transcript waits for its
// child, in the call's own task directory.
const continuedFile = "continued.jsonl"

// continuedTranscript writes the transcript a call continues (another
// worker's run of it: its submitter's conversation) where its own child
// may read it and no other call's can: in the task's own directory (made
// for it; the dispatcher starts the task there), mode 0600, never the
// worker's shared TMPDIR, which every child on the worker reads. cleanup
// removes it, and the directory if the task never started in it.
func continuedTranscript(root, id string, data []byte) (string, func(), error) {
	td, err := taskdir.Open(root).Task(id)
	if err != nil {
		return "", nil, err
	}
	if err := td.Create(); err != nil {
		return "", nil, err
	}
	f, err := td.CreateFresh(continuedFile)
	if err != nil {
		return "", nil, err
	}
	path := f.Name()
	cleanup := func() {
		_ = td.RemoveEntry(continuedFile)
		if !td.Has(taskdir.Envelope) {
			_ = os.Remove(td.Path()) // only if empty: nothing of the task's is there
		}
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return path, cleanup, nil
}
