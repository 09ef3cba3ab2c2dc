package temporal

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// PlanWorkflow runs one execution of a plan: the local engine's executor
// on the workflow's coroutines, each call an activity, the journal kept in
// the workflow's history (and handed on to the next execution by a
// resume).
func PlanWorkflow(w workflow.Context, in RunInput) (*RunOutput, error) {
	if in.Plan == nil {
		return nil, temporal.NewNonRetryableApplicationError("the run has no plan", ErrRefused, nil)
	}
	j := newKeyJournal(wf.MemoryJournal(in.Journal))
	prog := &progress{}
	if err := workflow.SetQueryHandler(w, ProgressQuery, prog.snapshot); err != nil {
		return nil, err
	}
	runner := &activityRunner{in: &in, prog: prog, gate: newResultGate(w, &in), keys: j}
	if in.Code != nil {
		runner.chainLock = workflow.NewSemaphore(w, 1)
		runner.root = runner.tip().Tree
	}
	if workflow.GetVersion(w, checkedTipsVersion, workflow.DefaultVersion, 1) >= 1 {
		// Runs started before it replay as they ran: a step's tip and
		// failure taken unchecked.
		runner.checkSteps = runner.gate != nil
	}
	rt := runtime{}
	if workflow.GetVersion(w, lazyCallsVersion, workflow.DefaultVersion, 1) >= 1 {
		// Runs started before it replay as they ran: every call's
		// coroutine at once.
		rt.lazy = newStarter(w)
	}
	res := wf.Execute(wctx{w}, in.Plan, wf.Options{
		RunID: in.RunID, Runner: runner, Journal: j, Inputs: in.Inputs,
		Concurrency: in.Plan.Concurrency, NewTaskID: taskIDs(w), Events: prog.add,
		Now: func() time.Time { return workflow.Now(w) }, Runtime: rt,
	})
	res.Started = in.Created
	for i := range res.Phases {
		for k := range res.Phases[i].Calls {
			c := &res.Phases[i].Calls[k]
			if msg, ok := in.Chained[c.TaskID]; ok && len(c.Code) > 0 {
				c.Landed = msg
				landedWhy(c, msg)
				c.ChainAttempts = in.ChainTries[c.TaskID]
			}
		}
	}
	if w.Err() != nil {
		res.Reason = "cancelled on the fleet; continue it with brood workflow resume " + in.RunID
	}
	_, done, failed, _ := wf.Summary(j.Lines())
	dc, _ := workflow.NewDisconnectedContext(w)
	_ = workflow.UpsertMemo(dc, map[string]any{
		memoStatus: res.Status, memoReason: res.Reason, memoAgents: res.Agents,
		memoDone: done, memoFailed: failed, memoFinished: res.Finished,
		memoUsage: res.Usage, memoCalls: wf.CallStatuses(res), // workflow list's, as workflow show's
	})
	in.Journal = nil
	return &RunOutput{Input: in, Result: res, Journal: j.Lines(), Bound: runner.gate != nil && runner.gate.bound}, nil
}

// lazyCallsVersion marks the runs whose calls' coroutines start only when
// a slot is near (runtime.go).
const lazyCallsVersion = "brood.plan.lazy-calls"

// CallInputW is the input of a single call's workflow.
type CallInputW struct {
	Spec   call.Spec  `json:"spec"`
	Limits CallLimits `json:"limits"`
	Queue  string     `json:"queue"`
	// Code is the submitter's tree (nil: the workers' own checkouts).
	Code *codesnap.Snapshot `json:"code,omitempty"`
	// From is where an earlier workflow of the same task left it (a
	// resume: its last heartbeat), so any worker continues it from its
	// transcript.
	From *Heartbeat `json:"from,omitempty"`
	// Signed is the submitter's signed submission (nil: unsigned).
	Signed *Signed `json:"signed,omitempty"`
	// Versions: as RunInput's.
	Versions map[string]int `json:"versions,omitempty"`
}

// CallWorkflow runs one agent call (Engine.Call): one activity. Its output
// keeps the call's last heartbeat, so a resume continues it anywhere.
func CallWorkflow(w workflow.Context, in CallInputW) (*CallOutput, error) {
	r := &activityRunner{in: &RunInput{Queue: in.Queue, Limits: map[string]CallLimits{"": in.Limits}, Code: in.Code, Signed: in.Signed},
		submitted: workflow.GetInfo(w).WorkflowStartTime}
	if in.From != nil {
		r.in.Stopped = map[string]Heartbeat{in.From.TaskID: *in.From}
	}
	out, err := r.run(wctx{w}, in.Spec)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	out.Snapshot = in.Code
	dc, _ := workflow.NewDisconnectedContext(w)
	_ = workflow.UpsertMemo(dc, map[string]any{memoStatus: out.Status, memoReason: out.Error})
	return out, nil
}

// progress is the latest event per phase, for the progress query.
type progress struct {
	mu     sync.Mutex
	order  []string
	events map[string]wf.Event
	// chaining counts the writers whose child has ended and whose change
	// is being put into the run's tree, or waits for its turn to be.
	chaining int
}

// chained adds n to the writers in the run's chain.
func (p *progress) chained(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chaining += n
}

func (p *progress) add(e wf.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.events == nil {
		p.events = map[string]wf.Event{}
	}
	if _, ok := p.events[e.Phase]; !ok {
		p.order = append(p.order, e.Phase)
	}
	p.events[e.Phase] = e
}

func (p *progress) snapshot() (Progress, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := Progress{Chaining: p.chaining}
	for _, id := range p.order {
		out.Events = append(out.Events, p.events[id])
	}
	return out, nil
}

// activityRunner is the call.Runner a plan's executor calls inside the
// workflow: each call becomes an activity on the run's task queue.
type activityRunner struct {
	in *RunInput
	// chainLock orders the steps of the run's tree (nil: no tree is
	// shipped, or a single call).
	chainLock workflow.Semaphore
	// submitted is when a single call was submitted (its workflow's
	// start): its duration counts from there, the wait for a worker to
	// take its workflow task in it. Zero for a plan's calls, which count
	// from their schedule.
	submitted time.Time
	// prog is the run's progress (nil for a single call): it counts the
	// writers in the chain, the lock's waiters too.
	prog *progress
	// gate checks each call's result before the run uses it (wfcheck.go;
	// nil: not checked, a single call's or a run from before it).
	gate *resultGate
	// seq counts the calls this execution scheduled (CallInput.Seq).
	seq int
	// keys names each call's plan key (CallInput.Key; nil: a single call).
	keys *keyJournal
	// checkSteps: the run checks each chain step's tip and failure
	// (chaincheck.go) against the gate's keys; root is the tree its
	// execution started from, which every tip it takes grows from.
	checkSteps bool
	root       string
}

func (r *activityRunner) limits(agent string) CallLimits {
	l, ok := r.in.Limits[agent]
	if !ok {
		l = r.in.Limits[""]
	}
	if l.Heartbeat <= 0 {
		l.Heartbeat = 60 * time.Second
	}
	if l.Timeout <= 0 {
		l.Timeout = 30 * time.Minute
	}
	if l.KillGrace <= 0 {
		l.KillGrace = 3 * time.Second
	}
	if l.Attempts <= 0 {
		l.Attempts = 3
	}
	return l
}

// Call implements call.Runner inside the workflow.
func (r *activityRunner) Call(ctx context.Context, spec call.Spec) (*call.Result, error) {
	out, err := r.run(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &out.Result, nil
}

// run schedules the call's activity and waits for its end: the result with
// the call's last heartbeat (a cancelled call's comes with the cancel and
// is kept in Stopped for the next execution).
func (r *activityRunner) run(ctx context.Context, spec call.Spec) (*CallOutput, error) {
	w := unwrap(ctx)
	l := r.limits(spec.Agent)
	hard := l.Timeout
	if d := time.Duration(spec.Limits.TimeoutMS) * time.Millisecond; d > 0 && d < hard {
		hard = d
	}
	ao := workflow.ActivityOptions{
		TaskQueue: r.in.Queue,
		// The agent's hard limit, plus the staged stop of the worker's
		// pool, which ends the child first and reports how.
		StartToCloseTimeout: hard + 2*l.KillGrace + 10*time.Second,
		HeartbeatTimeout:    l.Heartbeat,
		WaitForCancellation: true,
		Summary:             spec.Description,
		Priority:            temporal.Priority{PriorityKey: l.Priority},
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts:        int32(l.Attempts),
			NonRetryableErrorTypes: []string{ErrRefused},
		},
	}
	var out CallOutput
	r.seq++
	in := CallInput{Spec: spec, Signed: r.in.Signed, Seq: r.seq, Key: r.keys.keyOf(cmp.Or(spec.Resume, spec.TaskID))}
	if hb, ok := r.in.Stopped[cmp.Or(spec.Resume, spec.TaskID)]; ok {
		in.From = &hb
	}
	in.Code = r.startOf(in.From)
	began := workflow.Now(w) // the call's duration: first schedule (a single call: its submit) to completion
	if !r.submitted.IsZero() && r.submitted.Before(began) {
		began = r.submitted
	}
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(w, ao), CallActivityName, in).Get(w, &out)
	if err == nil {
		if r.gate != nil {
			if u := r.gate.take(in, &out); u != nil { // before anything reads it
				r.signed(&CallOutput{Result: u.Result, Sig: u.Sig})
			}
		}
		r.signed(&out)
		splitTimes(&out.Result, began, out.Started, workflow.Now(w)) // before its chain step: its run ends with its activity
		if out.Status == dispatch.StatusCancelled && out.Last != nil && out.Last.TaskID != "" {
			// Stopped, though its activity completed: a resume continues
			// it from where it was all the same.
			r.stopped(in, *out.Last)
		}
		r.prog.chained(1) // from its child's end: landing, never queued
		r.chain(w, in.Code, &out)
		r.prog.chained(-1)
		out.Text = callDuration(out.Text, workflow.Now(w).Sub(began))
		return &out, nil
	}
	var canceled *temporal.CanceledError
	var hb Heartbeat
	var stopped CallOutput // the cancel's details: a result (signed, from a worker that signs them)
	if errors.As(err, &canceled) && canceled.HasDetails() && canceled.Details(&stopped, &hb) == nil && hb.TaskID != "" {
		r.stopped(in, hb)
		return r.cancelledCall(w, in, &stopped, hb), nil
	}
	var timeout *temporal.TimeoutError
	if w.Err() != nil && errors.As(err, &timeout) && timeout.HasLastHeartbeatDetails() && timeout.LastHeartbeatDetails(&hb) == nil && hb.TaskID != "" {
		// The run was cancelled and the call's attempt timed out while it
		// wound down (a loaded worker): its last heartbeat still says
		// where a resume continues.
		r.stopped(in, hb)
	}
	var res *call.Result
	if r.gate != nil {
		out, refused := r.gate.failed(w, in, err)
		r.signed(out)
		if refused {
			return nil, errors.New(out.Error)
		}
		res, err = &out.Result, nil
	} else if s := signedEnding(spec, err); s != nil {
		// The worker's own failure, as it signed it: the submitter checks
		// it (Engine.takeResult); the workflow cannot vouch for it.
		s.Text = callDuration(s.Text, workflow.Now(w).Sub(began))
		return s, nil
	} else {
		res, err = failedCall(w, spec, err)
	}
	if err != nil {
		return nil, err
	}
	res.Text = callDuration(res.Text, workflow.Now(w).Sub(began))
	return &CallOutput{Result: *res}, nil
}

// stopped keeps where call in stopped (hb: its last heartbeat) and the
// snapshot it ran in, for the next execution of the run: only when its
// worker signed hb for the very input the workflow scheduled (the digest
// bindOf names), in a run whose results are checked (a run from before
// the check keeps it as it did). A heartbeat signed for another input (a
// completer re-briefed the call) is no continuation of this call: the
// resume would carry that conversation and its partial change into the
// run (review28 P1-2), so the call starts over from its brief instead.
func (r *activityRunner) stopped(in CallInput, hb Heartbeat) {
	if r.gate != nil && r.gate.briefs && carries(hb) && (hb.Signed == nil || hb.Signed.Brief != bindOf(in).Brief) {
		return
	}
	if r.in.Stopped == nil {
		r.in.Stopped = map[string]Heartbeat{}
	}
	r.in.Stopped[hb.TaskID] = hb
	if in.Code != nil {
		if r.in.StoppedIn == nil {
			r.in.StoppedIn = map[string]*codesnap.Snapshot{}
		}
		r.in.StoppedIn[hb.TaskID] = in.Code
	}
}

// failedCall is the result of an activity that did not complete: the last
// attempt's own result where it left one, else what stopped it.
func failedCall(w workflow.Context, spec call.Spec, err error) (*call.Result, error) {
	id := cmp.Or(spec.Resume, spec.TaskID)
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if isRefusal(app) {
			return nil, errors.New(finalMessage(app))
		}
		var last call.Result
		if app.HasDetails() && app.Details(&last) == nil && last.TaskID != "" {
			last.Error = cmp.Or(last.Error, app.Message())
			return &last, nil
		}
	}
	res := &call.Result{TaskID: id, Agent: spec.Agent, Status: dispatch.StatusFailed, Error: finalMessage(err)}
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &canceled) || w.Err() != nil:
		res.Status, res.Error = dispatch.StatusCancelled, "the run was cancelled during this call"
	case errors.As(err, &timeout):
		res.Status, res.Error = dispatch.StatusKilled, timeoutReason(timeout)
	}
	return res, nil
}

// finalMessage is why an activity failed for good, as one line: its own
// error's message, not the SDK's wrapping of it, and never that the call
// is tried again (an attempt that said so was the last one).
func finalMessage(err error) string {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return err.Error()
	}
	msg := app.Message()
	if !app.NonRetryable() {
		msg = strings.NewReplacer("; the call is tried again", "", " (the call is tried again)", "").Replace(msg)
		msg += " (its last attempt: the call is not tried again)"
	}
	return msg
}
