// Package local is the engine that runs agent calls as child processes of
// this brood through the process pool (a delegate.Dispatcher is its
// call.Runner), and keeps each workflow run under
// .brood/workflows/<run_id>/: run.json and plan.json (written once when the
// run starts), journal.jsonl (every call's start and end, synced), .lock
// (held while a process runs it, so listings tell running from dead),
// cancel (a request from `brood workflow cancel`) and result.json.
package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/workflow"
)

// File names in a run's directory.
const (
	RunFile    = "run.json"
	PlanFile   = "plan.json"
	ResultFile = "result.json"
	CancelFile = "cancel"
)

// Config is what the local engine needs.
type Config struct {
	// ProjectRoot is where .brood/ lives.
	ProjectRoot string
	// Runner runs one call (the process's Dispatcher).
	Runner call.Runner
	// Concurrency is the pool's limit; a plan can only lower it.
	Concurrency int
	// CancelPoll is how often a running plan looks for a cancel request
	// from another process (default 250ms).
	CancelPoll time.Duration
	// Redact scrubs secrets from what a run writes to disk: its plan,
	// inputs and journal (nil: the project's redactor of this process's
	// environment).
	Redact func(string) string
}

// Engine is the local engine.
type Engine struct {
	cfg Config
}

// New returns a local engine.
func New(cfg Config) *Engine {
	if cfg.CancelPoll <= 0 {
		cfg.CancelPoll = 250 * time.Millisecond
	}
	if cfg.Redact == nil {
		cfg.Redact = tool.NewLazyProjectRedactor(os.Environ(), cfg.ProjectRoot).Redact
	}
	return &Engine{cfg: cfg}
}

var _ engine.Engine = (*Engine)(nil)

// Name implements engine.Engine.
func (e *Engine) Name() string { return "local" }

// Call implements engine.Engine.
func (e *Engine) Call(ctx context.Context, s call.Spec) (*call.Result, error) {
	return e.cfg.Runner.Call(ctx, s)
}

// runRecord is run.json: the run's owner record, written once when it
// starts, sealed (seal.go).
type runRecord struct {
	RunID   string         `json:"run_id"`
	Plan    string         `json:"plan"`
	Source  string         `json:"source,omitempty"`
	Engine  string         `json:"engine"`
	Created time.Time      `json:"created"`
	Inputs  map[string]any `json:"inputs,omitempty"` // secrets redacted
	// PlanSHA256 is the hash of plan.json as written: the plan the user
	// approved, which a resume runs only as it was.
	PlanSHA256 string `json:"plan_sha256,omitempty"`
	// Seal is brood's HMAC of the record (Seal empty) under the user's
	// record key (taskdir.RecordKey).
	Seal string `json:"seal,omitempty"`
}

// Root is the directory of a project's workflow runs.
func Root(projectRoot string) string { return taskdir.Open(projectRoot).WorkflowsDir() }

func (e *Engine) dir(id string) string { return filepath.Join(Root(e.cfg.ProjectRoot), id) }

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, req engine.RunRequest) (*workflow.Result, error) {
	if _, err := workflow.Check(req.Plan, workflow.CheckOptions{File: req.Source, Inputs: req.Inputs}); err != nil {
		return nil, err
	}
	id := dispatch.NewID()
	dir := e.dir(id)
	if err := dispatch.EnsureStateDir(e.cfg.ProjectRoot); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	unlock, err := dispatch.LockTask(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec := runRecord{RunID: id, Plan: req.Plan.Name, Source: req.Source, Engine: e.Name(), Created: time.Now().UTC(), Inputs: req.Inputs}
	if err := e.writeRun(dir, rec, req.Plan); err != nil {
		return nil, err
	}
	if req.Started != nil {
		req.Started(id)
	}
	return e.execute(ctx, dir, rec, req.Plan, req.Events)
}

// execute runs (or continues) a recorded run under its held lock.
func (e *Engine) execute(ctx context.Context, dir string, rec runRecord, p *workflow.Plan, events func(workflow.Event)) (*workflow.Result, error) {
	j, err := workflow.OpenJournal(dir)
	if err != nil {
		return nil, err
	}
	j.Redacting(e.cfg.Redact)
	defer j.Close()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go e.watchCancel(ctx, dir, cancel)
	conc := e.cfg.Concurrency
	if p.Concurrency > 0 && (conc == 0 || p.Concurrency < conc) {
		conc = p.Concurrency
	}
	ctx, span := telemetry.FromContext(ctx).Workflow(ctx, p.Name, rec.RunID)
	res := workflow.Execute(ctx, p, workflow.Options{
		RunID: rec.RunID, Runner: e.cfg.Runner, Journal: j, Inputs: rec.Inputs,
		Concurrency: conc, NewTaskID: dispatch.NewID, Events: events,
	})
	span.End(res.Status)
	res.Started = rec.Created
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, errCancelRequested) {
		res.Reason = "cancelled with brood workflow cancel; continue it with brood workflow resume " + rec.RunID
	}
	if err := dispatch.WriteJSON(filepath.Join(dir, ResultFile), res); err != nil {
		return res, err
	}
	return res, nil
}

var errCancelRequested = errors.New("cancel requested")

// watchCancel cancels the run when another process asks (a cancel file).
func (e *Engine) watchCancel(ctx context.Context, dir string, cancel context.CancelCauseFunc) {
	t := time.NewTicker(e.cfg.CancelPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if dispatch.Exists(filepath.Join(dir, CancelFile)) {
				cancel(errCancelRequested)
				return
			}
		}
	}
}

// Resume implements engine.Engine.
func (e *Engine) Resume(ctx context.Context, id string, events func(workflow.Event)) (*workflow.Result, error) {
	if err := dispatch.CheckID(id); err != nil {
		return nil, fmt.Errorf("%w: %v", engine.ErrNotFound, err)
	}
	dir := e.dir(id)
	rec, err := readRun(dir, id)
	if err != nil {
		return nil, err
	}
	unlock, err := dispatch.LockTask(dir)
	if errors.Is(err, dispatch.ErrTaskBusy) {
		return nil, fmt.Errorf("workflow %s: %w", id, engine.ErrRunning)
	} else if err != nil {
		return nil, err
	}
	defer unlock()
	var prev workflow.Result
	if readResult(dir, &prev) == nil && prev.Status == workflow.RunDone {
		return &prev, nil
	}
	p, err := readPlan(dir, rec)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(filepath.Join(dir, CancelFile))
	return e.execute(ctx, dir, *rec, p, events)
}

// Cancel implements engine.Engine.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	info, err := e.Show(ctx, id)
	if err != nil {
		return err
	}
	dir := e.dir(id)
	if info.Status != workflow.RunRunning {
		if info.Status == workflow.RunInterrupted {
			res := &workflow.Result{RunID: id, Plan: info.Plan, Status: workflow.RunCancelled, Reason: "cancelled with brood workflow cancel after its process died; continue it with brood workflow resume " + id, Started: info.Created, Finished: time.Now().UTC()}
			return dispatch.WriteJSON(filepath.Join(dir, ResultFile), res)
		}
		return fmt.Errorf("workflow %s is not running (status %s)", id, info.Status)
	}
	return dispatch.WriteFileAtomic(filepath.Join(dir, CancelFile), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"))
}
