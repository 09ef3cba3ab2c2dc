package temporal

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/taskdir"
	wf "github.com/broodhq/brood/internal/workflow"
)

// Config is what the submitter's engine needs.
type Config struct {
	Client    client.Client
	Namespace string
	// Queue is the task queue the workers poll.
	Queue string
	// Limits are the limits of an agent type's calls (from the
	// submitter's settings and registry); nil: the defaults.
	Limits func(agent string) CallLimits
	// Agents lists the agent types a plan may name (for Limits).
	Agents []string
	// Poll is how often a waiting submitter asks a run for its progress
	// (default 250ms).
	Poll time.Duration
	// DataConverter is the client's (memo decoding); nil: the default.
	DataConverter converter.DataConverter
	// Code ships the submitter's tree to the workers and applies their
	// changes back (nil: workers run in their own checkouts).
	Code *CodeConfig
	// ProjectRoot is the submitter's project: a plan run's result is kept
	// in its .brood/workflows/<run_id>/result.json, as the local engine
	// keeps it (empty: nowhere).
	ProjectRoot string
	// Signer signs every submission (brood fleet keygen's key; nil:
	// unsigned, which a worker refuses unless it allows unsigned ones).
	Signer *Signer
	// Store is the fleet's store, where a signed submission's payload is
	// put once: only its reference travels in the run's and every call's
	// input (signref.go). Nil: Code's store; neither: it travels inline.
	Store Store
	// ClaimStore is the store the client's claim check keeps large
	// payloads in (ClientOptions.ClaimStore): replaying a run's history
	// reads them back from it. Nil: Store's, else Code's.
	ClaimStore *blobstore.Store
	// Workers are the worker keys whose results this submitter takes
	// (resultsig.go): a result no key of them signed for its call is
	// refused, its change not applied. Nil: not checked (tests that embed
	// a worker); brood always sets it (SubmitterWorkerTrust).
	Workers *ResultTrust
}

// Engine is the Temporal engine as a submitter sees it.
type Engine struct {
	cfg Config
	// callStatus is told a single call's status as it changes while its
	// submitter waits (SetCallStatus; nil: nobody).
	callStatus func(taskID, status string)
}

// SetCallStatus has Call tell f its call's status whenever it changes
// while the call waits for a worker or runs (queued, with why; running
// on a worker), so a submitter is never silent while no worker answers.
func (e *Engine) SetCallStatus(f func(taskID, status string)) { e.callStatus = f }

var _ engine.Engine = (*Engine)(nil)

// New returns the engine.
func New(cfg Config) *Engine {
	if cfg.Queue == "" {
		cfg.Queue = DefaultTaskQueue
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	if cfg.DataConverter == nil {
		cfg.DataConverter = converter.GetDefaultDataConverter()
	}
	return &Engine{cfg: cfg}
}

// Unsigned is a warning when this submitter signs nothing (it has no
// fleet key): its submissions go out unsigned, and every worker that does
// not allow unsigned ones refuses them. "" when it signs.
func (e *Engine) Unsigned() string {
	if e.cfg.Signer != nil {
		return ""
	}
	return "this submission goes out unsigned (no fleet key: brood fleet keygen makes one); a worker that does not allow unsigned submissions refuses every call of it"
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return "temporal" }

func (e *Engine) limits(agent string) CallLimits {
	if e.cfg.Limits == nil {
		return CallLimits{}
	}
	return e.cfg.Limits(agent)
}

// Call implements engine.Engine: one call as its own workflow.
func (e *Engine) Call(ctx context.Context, s call.Spec) (*call.Result, error) {
	if s.Fork || len(s.History) > 0 {
		return nil, errors.New("a fork carries this process's conversation and runs here only; the fleet takes self-contained briefs")
	}
	if s.TaskID == "" && s.Resume == "" {
		s.TaskID = dispatch.NewID()
	}
	if s.Resume != "" {
		s.Resume = e.ResumeID(ctx, s.Resume)
	}
	var from *Heartbeat
	var snap *codesnap.Snapshot
	var note string
	var err error
	if s.Resume != "" {
		if from, snap, note, err = e.resumeCall(ctx, &s); err != nil {
			return nil, err
		}
		if u := e.unverified(ctx, s.Resume); u != "" { // before this start is kept here
			note = strings.TrimSpace(note + "\n[brood: the run this follow-up continues is " + u + "]")
		}
	}
	taskID := cmp.Or(s.Resume, s.TaskID)
	opts := client.StartWorkflowOptions{ID: callWorkflowID(taskID), TaskQueue: e.cfg.Queue, StaticSummary: s.Description,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Never attach to a running execution: it is not this start's
		// (startError), and its run id is never kept as this start's.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo:                                     e.withOrigin(map[string]any{memoPlan: "call " + s.Agent, memoAgent: s.Agent, memoSource: s.Description})}
	if snap == nil {
		if snap, err = e.capture(ctx); err != nil {
			return nil, err
		}
	}
	in := CallInputW{Spec: s, Limits: e.limits(s.Agent), Queue: e.cfg.Queue, Code: snap, From: from, Versions: workflowChanges()}
	if in.Signed, err = e.sign(ctx, Submission{Kind: "call", Workflow: opts.ID, Queue: in.Queue, Spec: &in.Spec, From: from, Versions: in.Versions,
		Limits: map[string]CallLimits{"": in.Limits}, Code: snap, At: time.Now().UTC()}); err != nil {
		return nil, err
	}
	if err := e.keepSent(ctx, taskID, in); err != nil { // before it is sent: what tasks show/resume take as this checkout's (callsent.go)
		return nil, err
	}
	run, err := e.cfg.Client.ExecuteWorkflow(ctx, opts, CallWorkflowName, in)
	if err != nil {
		return nil, e.startError(ctx, taskID, err)
	}
	e.keepRun(ctx, taskID, in, run.GetRunID())
	var events func(wf.Event)
	if e.callStatus != nil {
		events = func(ev wf.Event) { e.callStatus(taskID, ev.Status) }
	}
	if err := e.await(ctx, run, events); err != nil && !refusal(err) {
		return nil, err
	}
	// The call's output, or its refusal, is this brood's own replay of the
	// execution's history (histreplay.go).
	read, err := e.replayCall(context.WithoutCancel(ctx), opts.ID, run.GetRunID(), func(start CallInputW) error {
		if !sameJSON(start, in) {
			return fmt.Errorf("task %s's workflow on Temporal (execution %s) was not started with the input this submitter sent: nothing of it is taken; check who can reach the namespace's frontend", taskID, run.GetRunID())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := callEnd(read.got)
	if err != nil {
		return nil, err
	}
	r, ok := e.takeCall(ctx, taskID, opts.ID, run.GetRunID(), read.start, &out, read.times, true)
	if !ok {
		return &r, nil
	}
	fleetAdvice(&r)
	if note != "" {
		r.Text += "\n\n" + note
	}
	e.landCall(ctx, callKey(taskID, run.GetRunID()), snap, &r, s.Agent)
	return &r, nil
}

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, req engine.RunRequest) (*wf.Result, error) {
	if _, err := wf.Check(req.Plan, wf.CheckOptions{File: req.Source, Inputs: req.Inputs}); err != nil {
		return nil, err
	}
	in := RunInput{RunID: dispatch.NewID(), Plan: req.Plan, Source: req.Source, Inputs: req.Inputs,
		Created: time.Now().UTC(), Queue: e.cfg.Queue, Limits: e.limitsOf(req.Plan)}
	snap, err := e.capture(ctx)
	if err != nil {
		return nil, err
	}
	in.Code = snap
	return e.keep(e.start(ctx, in, req.Started, req.Events))
}

// limitsOf collects the limits of every agent type a plan names.
func (e *Engine) limitsOf(p *wf.Plan) map[string]CallLimits {
	m := map[string]CallLimits{"": e.limits("")}
	for _, a := range planAgents(p) {
		m[a] = e.limits(a)
	}
	return m
}

// planAgents is every agent type a plan names.
func planAgents(p *wf.Plan) []string {
	var out []string
	seen := map[string]bool{}
	add := func(c *wf.Call) {
		if !seen[c.Agent] {
			seen[c.Agent] = true
			out = append(out, c.Agent)
		}
	}
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j := range ph.Parallel {
			add(&ph.Parallel[j])
		}
		for j := range ph.Stages {
			add(&ph.Stages[j])
		}
		if ph.UntilQuiet != nil {
			add(&ph.UntilQuiet.Call)
		}
		if ph.Votes != nil {
			add(&ph.Votes.Call)
		}
	}
	return out
}

func (e *Engine) start(ctx context.Context, in RunInput, started func(string), events func(wf.Event)) (*wf.Result, []wf.JournalLine, error) {
	var err error
	in.Workers, in.Namespace = e.cfg.Workers.workerSet(), e.cfg.Namespace // the workflow uses only what these signed (wfcheck.go)
	in.Versions = workflowChanges()                                       // what its replay must have taken (histreplay.go)
	if in.Signed, err = e.sign(ctx, Submission{Kind: "plan", Workflow: in.RunID, Queue: in.Queue, Plan: in.Plan, Inputs: in.Inputs,
		Limits: in.Limits, Code: in.Code, Froms: FromPins(in.Stopped), Workers: in.Workers, Carried: in.Carried, Tip: in.Tip, Versions: in.Versions,
		At: time.Now().UTC()}); err != nil {
		return nil, nil, err
	}
	opts := client.StartWorkflowOptions{
		ID: in.RunID, TaskQueue: e.cfg.Queue, StaticSummary: "brood plan " + in.Plan.Name,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		Memo:                  e.withOrigin(map[string]any{memoPlan: in.Plan.Name, memoSource: in.Source}),
	}
	run, err := e.cfg.Client.ExecuteWorkflow(ctx, opts, PlanWorkflowName, in)
	if err != nil {
		return nil, nil, fmt.Errorf("start the run on Temporal: %w", err)
	}
	if started != nil {
		started(in.RunID)
	}
	// The run's output is this brood's own replay of the execution's
	// history, never the completion result the server holds (histreplay.go).
	if err := e.await(ctx, run, events); err != nil && !refusal(err) {
		return nil, nil, err
	}
	r, err := e.replayRun(context.WithoutCancel(ctx), in.RunID, run.GetRunID(), func(start RunInput) error { // a cancelled run's end is taken too
		if !sameJSON(start, in) {
			return fmt.Errorf("run %s's execution %s on Temporal was not started with the input this submitter sent: nothing of it is taken; check who can reach the namespace's frontend", in.RunID, run.GetRunID())
		}
		return nil
	})
	var refused historyRefused
	if errors.As(err, &refused) {
		// Its verdict is kept (result.json), so this checkout lists the
		// run failed, never as the workflow's memo says (review26 P2-1).
		return &wf.Result{RunID: in.RunID, Plan: in.Plan.Name, Status: wf.RunFailed, Reason: err.Error(), Started: in.Created}, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	// The landing's run, from-tree and record are this submitter's own
	// signed input's; only the tip is the run's, and only when a worker
	// key it trusts signed it for this execution (review21 P1-2).
	e.settleOwn(ctx, in, &r, run.GetRunID(), false)
	e.takeRun(ctx, runFrom{id: in.RunID, exec: run.GetRunID(), carried: in.Carried, plan: in.Plan, inputs: in.Inputs}, &r)
	settledEvents(r.out.Result, events)
	return r.out.Result, r.out.Journal, nil
}

// temporalAppError is a workflow's refusal, as one line.
type temporalAppError struct{ msg string }

// refusal: err is how a workflow ended without a result (its refusal, a
// failure, a termination: workflowErr), which is the server's word: the
// replay of its history says it again in brood's own words, or refuses
// it.
func refusal(err error) bool {
	var t *temporalAppError
	var x *temporal.WorkflowExecutionError
	return errors.As(err, &t) || errors.As(err, &x)
}

func (t *temporalAppError) Error() string { return t.msg }

// await waits for a run's end, passing its progress on. When ctx ends
// first the run is cancelled on the fleet (its calls stop in stages
// through their heartbeats) and its end is still awaited, so what it did
// is kept. The run's result is not read: the caller replays the
// execution's history (histreplay.go).
func (e *Engine) await(ctx context.Context, run client.WorkflowRun, events func(wf.Event)) error {
	done := make(chan error, 1)
	bg := context.WithoutCancel(ctx)
	go func() { done <- run.Get(bg, nil) }()
	tick := time.NewTicker(e.cfg.Poll)
	defer tick.Stop()
	seen := map[string]wf.Event{}
	cancelled := false
	var cancelAt time.Time
	for {
		select {
		case err := <-done:
			if events != nil {
				e.progress(bg, run.GetID(), run.GetRunID(), seen, events)
			}
			return workflowErr(err)
		case <-tick.C:
			if events != nil {
				e.progress(ctx, run.GetID(), run.GetRunID(), seen, events)
			}
			if cancelled {
				if why := e.nobodyEnds(bg, run.GetID(), run.GetRunID(), cancelAt); why != "" {
					return errors.New(why)
				}
			}
		case <-ctx.Done():
			if !cancelled {
				cancelled, cancelAt = true, time.Now()
				if err := e.cfg.Client.CancelWorkflow(bg, run.GetID(), run.GetRunID()); err != nil {
					return fmt.Errorf("cancel workflow %s: %w", run.GetID(), err)
				}
			}
			ctx = bg
		}
	}
}

// progress asks a run for its progress and passes on what changed.
func (e *Engine) progress(ctx context.Context, id, runID string, seen map[string]wf.Event, events func(wf.Event)) {
	if strings.HasPrefix(id, callWorkflowID("")) {
		e.callProgress(ctx, id, runID, seen, events)
		return
	}
	if !heard(seen) && e.runWaits(ctx, id, runID, seen, events) {
		// No worker has taken the run: none would answer the query.
		return
	}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := e.cfg.Client.QueryWorkflow(qctx, id, runID, ProgressQuery)
	if err != nil {
		// No worker answered (every one may be gone): what the run
		// waits for, from its description.
		e.runWaits(ctx, id, runID, seen, events)
		return
	}
	var p Progress
	if v.Get(&p) != nil {
		return
	}
	answersAgain(id, seen, events)
	delete(seen, "") // a worker answers: a later wait is said again
	// The query may have taken most of qctx (a worker answers it): the
	// description has time of its own.
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	defer dcancel()
	if !e.queuedEvents(dctx, id, runID, p.Events, p.Chaining) {
		return
	}
	for _, ev := range p.Events {
		if old, ok := seen[ev.Phase]; ok && sameNews(old, ev) || landingEnd(ev) {
			continue
		}
		seen[ev.Phase] = ev
		events(ev)
	}
}

// workflowErr says why a workflow did not complete; a refusal is its one
// line.
func workflowErr(err error) error {
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && isRefusal(app) {
		return &temporalAppError{msg: finalMessage(app)}
	}
	var term *temporal.TerminatedError
	if errors.As(err, &term) {
		return &temporalAppError{msg: "it was terminated on Temporal (temporal workflow terminate), so it has no result"}
	}
	return err
}

// Resume implements engine.Engine: a run still on the fleet is awaited; a
// finished one is returned; a cancelled or failed one starts its next
// execution with the journal so far, so no finished call runs again.
func (e *Engine) Resume(ctx context.Context, id string, events func(wf.Event)) (*wf.Result, error) {
	return e.keep(e.resume(ctx, id, events))
}

func (e *Engine) resume(ctx context.Context, id string, events func(wf.Event)) (*wf.Result, []wf.JournalLine, error) {
	d, err := e.describe(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	info := d.GetWorkflowExecutionInfo()
	if o, ok := e.foreign(info.GetMemo().GetFields()); ok {
		return nil, nil, notHere("workflow run", id, o, "brood workflow resume "+id)
	}
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		exec := info.GetExecution().GetRunId()
		if err := e.await(ctx, e.cfg.Client.GetWorkflow(ctx, id, exec), events); err != nil && !refusal(err) {
			return nil, nil, err
		}
		r, err := e.ownRunOutput(context.WithoutCancel(ctx), id, exec) // brood's own output (histreplay.go)
		if err != nil {
			return nil, nil, err
		}
		e.settleOwn(ctx, ownPart(r.out.Input, r.sub), &r, tipRun(exec, r.sub), false)
		e.takeRun(ctx, e.runFromOwn(id, exec, r.out.Input, r.sub), &r)
		settledEvents(r.out.Result, events)
		return r.out.Result, r.out.Journal, nil
	}
	read := info.GetExecution().GetRunId() // the execution this resume continues: its calls' continuations are pinned to it
	// The earlier execution's output is brood's own replay of its
	// history, never the completion result the server holds
	// (histreplay.go; review25 P1-4).
	// Nothing lands, and nothing is signed again, unless this key started
	// the execution (review21 P1-2: a done execution too).
	r, err := e.ownRunOutput(ctx, id, read)
	if err != nil {
		return nil, nil, err
	}
	out, sub := &r.out, r.sub
	from := e.runFromOwn(id, read, out.Input, sub)
	// What the execution's writers did, when its submitter was not there
	// to land it (it died, or this is another machine's checkout).
	if out.Result.Status == wf.RunDone {
		// A tree that did not land before is tried again: the user may
		// have made room for it (fleetqa4 P3: "resumed" did nothing).
		e.settleOwn(ctx, ownPart(out.Input, sub), &r, tipRun(read, sub), true)
		e.takeRun(ctx, from, &r)
		return out.Result, out.Journal, nil
	}
	landed, err := e.landEarlierRun(ctx, &r, read)
	e.takeRun(ctx, from, &r)
	if err != nil {
		return out.Result, out.Journal, nil
	}
	in := out.Input
	in.Results, in.Carried = e.carry(from, r.verdicts, out.Journal) // each bound to the execution it was checked in
	in.Journal, in.ChainFails = out.Journal, nil                    // each failure signed in its execution: the records say them
	in.Queue = e.cfg.Queue
	in.Stopped = readFroms(in.Stopped, read, pinsOf(sub))
	var over int
	in.Stopped, over = uncheckedStops(in.Stopped, &r)
	res, journal, err := e.start(ctx, in, nil, events)
	if err == nil && landed != "" && landed != alreadyLanded {
		res.Landed = strings.TrimSpace(landed + " (what the earlier execution wrote); then " + strings.TrimPrefix(res.Landed, "fleet: "))
	}
	if err == nil && over > 0 {
		res.Reason = joinReason(res.Reason, startOver(over))
	}
	return res, journal, err
}

// Cancel implements engine.Engine: a plan run by its id, or a single
// call (brood subagent --engine temporal) by its task id.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	d, err := e.describe(ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		// A single call, by its task id or a unique prefix or tail of one.
		if whole, rerr := e.resolveCall(ctx, id); rerr == nil {
			if cd, cerr := e.cfg.Client.DescribeWorkflowExecution(ctx, callWorkflowID(whole), ""); cerr == nil {
				d, err, id = cd, nil, callWorkflowID(whole)
			}
		}
	}
	if err != nil {
		return err
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		info := e.infoOf(d.GetWorkflowExecutionInfo())
		return fmt.Errorf("workflow %s is not running (status %s)", id, info.Status)
	}
	return e.cfg.Client.CancelWorkflow(ctx, id, "")
}

func (e *Engine) describe(ctx context.Context, id string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if err := dispatch.CheckID(id); err != nil {
		return nil, fmt.Errorf("%w: %v", engine.ErrNotFound, err)
	}
	d, err := e.cfg.Client.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("%w: %s", engine.ErrNotFound, id)
	} else if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", id, err)
	}
	return d, nil
}

// keep writes a run's journal and result into the submitter's project,
// where the local engine keeps them (.brood/workflows/<run_id>/
// journal.jsonl and result.json, each tmp and rename): the same files
// whichever engine ran the plan. The journal is the whole run's, every
// execution of it (the workflow's own history is the durable one; this is
// its copy for the submitter's tools). No run.json: the run is listed as
// the fleet's, never as a local one.
func (e *Engine) keep(res *wf.Result, journal []wf.JournalLine, err error) (*wf.Result, error) {
	if res != nil {
		runAdvice(res)
	}
	if res == nil || res.RunID == "" || e.cfg.ProjectRoot == "" || dispatch.CheckID(res.RunID) != nil {
		return res, err
	}
	file := e.resultFile(res.RunID)
	werr := os.MkdirAll(filepath.Dir(file), 0o700)
	if werr == nil {
		werr = writeJournal(filepath.Join(filepath.Dir(file), wf.JournalFile), landedJournal(res, journal))
	}
	if werr == nil {
		werr = local.KeepResult(e.cfg.ProjectRoot, res) // sealed: a shipped one is never listed
	}
	if werr != nil && err == nil {
		err = fmt.Errorf("keep the run's result: %w", werr)
	}
	return res, err
}

// resultFile is where a run's result is kept in the submitter's project.
func (e *Engine) resultFile(runID string) string {
	return filepath.Join(taskdir.Open(e.cfg.ProjectRoot).WorkflowsDir(), runID, "result.json")
}

// keptResult is the run's result.json in the submitter's project, or ""
// when this engine keeps none or has none for it.
func (e *Engine) keptResult(runID string) string {
	if e.cfg.ProjectRoot == "" || dispatch.CheckID(runID) != nil {
		return ""
	}
	if _, err := os.Stat(e.resultFile(runID)); err != nil {
		return ""
	}
	return e.resultFile(runID)
}

// writeJournal writes a run's journal as the local engine's journal.jsonl
// holds it (one JSON line per call start and end), tmp and rename.
func writeJournal(path string, lines []wf.JournalLine) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("journal of the run: %w", err)
		}
	}
	return dispatch.WriteFileAtomic(path, b.Bytes())
}
