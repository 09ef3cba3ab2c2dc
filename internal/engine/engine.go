// Package engine is the seam between brood's entry points (brood workflow,
// brood subagent, the Workflow tool) and what runs agent calls: the local
// process pool (engine/local) or a fleet (the Temporal engine). An Engine
// runs one agent call (spec → verified result) and whole plans, durably:
// a run it started can be resumed by id, cancelled from another process,
// and listed while it runs. Nothing here is local to one machine: runs and
// tasks are named by opaque ids, never by paths or pids.
//
// enginetest states what every engine must do; each engine runs it.
package engine

import (
	"context"
	"errors"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/workflow"
)

// Engine runs agent calls and plans.
type Engine interface {
	// Name is the engine's name (local, temporal).
	Name() string
	// Call runs one agent call to its verified end.
	Call(ctx context.Context, s call.Spec) (*call.Result, error)
	// Run runs a checked plan to its end. The run is recorded before its
	// first call starts (req.Started learns its id), and every call is
	// journaled, so an interrupted run continues with Resume. Cancel ctx
	// to stop it: it ends cancelled, and resumable.
	Run(ctx context.Context, req RunRequest) (*workflow.Result, error)
	// Resume continues a run that was interrupted or cancelled; no call
	// that had finished runs again. A run that is still running elsewhere
	// is ErrRunning; a finished one returns its result.
	Resume(ctx context.Context, runID string, events func(workflow.Event)) (*workflow.Result, error)
	// Cancel asks a run to stop, wherever it runs; a run that is not
	// running is marked cancelled.
	Cancel(ctx context.Context, runID string) error
	// List shows every run, running ones included, newest first.
	List(ctx context.Context) ([]RunInfo, error)
	// Show is one run, with its result when it has one.
	Show(ctx context.Context, runID string) (*RunInfo, error)
}

// RunRequest is one plan to run.
type RunRequest struct {
	Plan *workflow.Plan
	// Source names where the plan came from (a file, "the Workflow tool").
	Source string
	// Inputs are resolved (workflow.ResolveInputs).
	Inputs map[string]any
	// Started is told the run's id once it is recorded (may be nil).
	Started func(runID string)
	// Events receive progress per phase (may be nil).
	Events func(workflow.Event)
}

// RunInfo is a run as listings show it.
type RunInfo struct {
	RunID    string     `json:"run_id"`
	Plan     string     `json:"plan"`
	Source   string     `json:"source,omitempty"`
	Engine   string     `json:"engine"`
	Status   string     `json:"status"`
	Reason   string     `json:"reason,omitempty"`
	Created  time.Time  `json:"created"`
	Finished *time.Time `json:"finished,omitempty"`
	Agents   int        `json:"agents"`
	Done     int        `json:"done"`
	Failed   int        `json:"failed"` // finished without a result, cancelled ones aside
	Running  int        `json:"running"`
	// Origin is the tree a fleet run was submitted from when it is not
	// this checkout (its change lands there only); "" for this one's.
	Origin string `json:"origin,omitempty"`
	// Calls counts the journaled calls by their last status (done,
	// cancelled, not-applied, invalid, ...; running for one not ended).
	Calls map[string]int `json:"calls,omitempty"`
	Usage model.Usage    `json:"usage"`
	// ResultRef names where the whole result is kept (for a local run,
	// its result.json).
	ResultRef string           `json:"result_ref,omitempty"`
	Result    *workflow.Result `json:"result,omitempty"`
}

// Errors engines return.
var (
	ErrNotFound = errors.New("no such workflow run")
	ErrRunning  = errors.New("the run is still running in another process")
)
