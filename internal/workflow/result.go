package workflow

import (
	"encoding/json"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// Run statuses.
const (
	RunRunning     = "running"
	RunDone        = "done"
	RunPartial     = "partial"
	RunFailed      = "failed"
	RunCancelled   = "cancelled"
	RunInterrupted = "interrupted" // its process died; resume it
)

// Phase statuses.
const (
	PhaseDone    = "done"
	PhaseFailed  = "failed"
	PhaseSkipped = "skipped"
	PhasePartial = "partial"
)

// Call statuses beyond the task's own (done, partial, checkpoint, failed,
// killed, cancelled, rejected): each says what became of the call, and
// only done yields an output.
const (
	CallDone = "done"
	// CallSkipped: it never started (a cap was reached, or a task it
	// depends on yielded no result); Error says which.
	CallSkipped = "skipped"
	// CallCancelled: the run was cancelled before or while it ran; a
	// resume continues it.
	CallCancelled = "cancelled"
	// CallNotApplied: the child finished, but its change did not land in
	// the tree (it conflicts with what another call wrote); its patch is
	// kept with its task.
	CallNotApplied = "not-applied"
	// CallInvalid: its output did not validate against the call's schema
	// after the retries.
	CallInvalid = "invalid"
	// CallUnverified: its records failed the parent's verification.
	CallUnverified = "unverified"
)

// CallRecord is one agent call of a run as its journal and result keep it.
type CallRecord struct {
	// Key names the call within the plan: phase/task, phase/item/stage,
	// phase/rN/i, phase/vN.
	Key      string `json:"key"`
	TaskID   string `json:"task_id,omitempty"`
	Agent    string `json:"agent"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts,omitempty"`
	// Worker is the fleet worker whose child ran the call (none on the
	// local engine).
	Worker   string   `json:"worker,omitempty"`
	Error    string   `json:"error,omitempty"`
	Failures []string `json:"failures,omitempty"`
	// Output is what the plan uses: the validated JSON of a call with a
	// schema, else its summary; null for a call that did not end done and
	// verified (and valid).
	Output any         `json:"output"`
	Usage  model.Usage `json:"usage"`
	// Code is a fleet writer's change (call.Result.Code), against the
	// run's tree as it was when the call started.
	Code json.RawMessage `json:"code,omitempty"`
	// Landed says what became of that change in the run's tree (which
	// the submitter lands whole: Result.Landed).
	Landed string `json:"landed,omitempty"`
	// QueuedMS and RanMS are the call's wait for a pool slot or a worker
	// and its run after it (call.Result's); ChainAttempts are the
	// attempts a fleet writer's change took to go into the run's tree.
	QueuedMS      int64 `json:"queued_ms,omitempty"`
	RanMS         int64 `json:"ran_ms,omitempty"`
	ChainAttempts int   `json:"chain_attempts,omitempty"`
}

// PhaseResult is one phase of a finished run.
type PhaseResult struct {
	ID     string       `json:"id"`
	Shape  string       `json:"shape"`
	Status string       `json:"status"`
	Reason string       `json:"reason,omitempty"`
	Output any          `json:"output"`
	Calls  []CallRecord `json:"calls"`
	Rounds int          `json:"rounds,omitempty"` // until_quiet
}

// Skipped is a phase or task that did not run, and why.
type Skipped struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Result is a finished (or stopped) run: result.json.
type Result struct {
	RunID    string         `json:"run_id"`
	Plan     string         `json:"plan"`
	Status   string         `json:"status"`
	Reason   string         `json:"reason,omitempty"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Agents   int            `json:"agents"`
	Usage    model.Usage    `json:"usage"`
	Outputs  map[string]any `json:"outputs"`
	Phases   []PhaseResult  `json:"phases"`
	Skipped  []Skipped      `json:"skipped,omitempty"`
	// Landed says what became of a fleet run's changes in the
	// submitter's tree (empty: none, or a local run).
	Landed string `json:"landed,omitempty"`
}

// Counts are a phase's calls by state, for progress: Failed is every call
// that ended without a result except those Skipped (never started: a cap,
// a dependency), Cancelled (continued by a resume) and NotApplied.
type Counts struct {
	Done      int `json:"done"`
	Running   int `json:"running"`
	Failed    int `json:"failed"`
	Skipped   int `json:"skipped,omitempty"`
	Cancelled int `json:"cancelled,omitempty"`
	// NotApplied are writers whose change did not land in the tree.
	NotApplied int `json:"not_applied,omitempty"`
	// Landing are fleet writers that finished with a change which is in
	// the run's tree, not yet in the submitter's (it lands when the run
	// ends): not Done until it does, as a local writer is not done
	// before its change applies.
	Landing int `json:"landing,omitempty"`
	// Chaining are fleet writers whose child has ended and whose change
	// is being put into the run's tree (before the call ends): landing,
	// not queued.
	Chaining int `json:"chaining,omitempty"`
	Queued   int `json:"queued"`
	// Journaled are the Done (or Landing) calls a resume took from the
	// journal without running them again: part of Done, not beside it.
	Journaled int `json:"journaled,omitempty"`
}

// Event is progress: one phase's counts after a change; with no Phase,
// the run's own state (a fleet run no worker has taken: its Status says
// why it is queued).
type Event struct {
	RunID  string `json:"run_id"`
	Phase  string `json:"phase"`
	Shape  string `json:"shape"`
	Status string `json:"status"` // waiting, running, done, failed, skipped, partial
	Counts
}
