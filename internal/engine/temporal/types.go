// Package temporal is the fleet engine: a plan runs as a Temporal workflow
// and each agent call as an activity that a `brood worker` runs as a real
// brood child process, through the same call path as the local engine
// (call.Runner, a spawn.Dispatcher on the worker). Every Temporal import
// of brood lives here and in internal/cli/worker, so the child process
// never links the SDK.
//
// The mapping (DESIGN.md, scale-out):
//
//   - the activity's heartbeat is the child's ping; its HeartbeatTimeout is
//     the lifeguard's silence limit and its StartToClose the agent's hard
//     timeout. The worker's own pool still kills a silent child, and that
//     attempt fails retryably;
//   - a heartbeat's details name the task, where its transcript is kept
//     in the fleet's store and how far it had got, so a retry on another
//     worker continues the conversation instead of starting over; a call
//     that had finished is returned from the store, never run again;
//   - the plan's journal is the workflow's own history: a run survives
//     worker and server restarts, and `brood workflow resume` of a
//     cancelled run starts its next execution with the earlier journal;
//   - priorities become Temporal priority keys, per-worker concurrency the
//     worker's activity slots, and cancellation reaches the child through
//     the heartbeat's response.
package temporal

import (
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/workflow"
)

// Names registered with Temporal.
const (
	PlanWorkflowName = "brood.plan"
	CallWorkflowName = "brood.call"
	CallActivityName = "brood.agent"
	ProgressQuery    = "brood.progress"
	// DefaultTaskQueue is the queue workers poll unless told otherwise.
	DefaultTaskQueue = "brood"
	// DefaultNamespace is Temporal's default namespace.
	DefaultNamespace = "default"
)

// Error types an activity fails with. Retryable: a child the lifeguard
// killed for silence, a worker that stopped under it, a task an earlier
// attempt's child on this worker still holds, a turn that could not be
// made durable (the store or the server did not take it within its limit:
// the child was held, then stopped before its next model request), an
// attempt whose heartbeats the server refuses. Not: a call refused before
// any child started (unknown agent, bad schema).
const (
	ErrChildSilent      = "brood.ChildSilent"
	ErrWorkerStopped    = "brood.WorkerStopped"
	ErrTaskBusy         = "brood.TaskBusy"
	ErrNotDurable       = "brood.NotDurable"
	ErrHeartbeatRefused = "brood.HeartbeatRefused"
	ErrRefused          = "brood.Refused"
)

// Memo keys of a run (what listings show without fetching its history).
const (
	memoPlan     = "brood_plan"
	memoSource   = "brood_source"
	memoStatus   = "brood_status"
	memoReason   = "brood_reason"
	memoAgents   = "brood_agents"
	memoDone     = "brood_done"
	memoFailed   = "brood_failed"
	memoFinished = "brood_finished"
	memoUsage    = "brood_usage"
	memoCalls    = "brood_calls"
	memoAgent    = "brood_agent"
)

// CallLimits are the submitter's limits an activity is scheduled with.
type CallLimits struct {
	// Heartbeat is the lifeguard's silence limit (pool.heartbeat_timeout).
	Heartbeat time.Duration `json:"heartbeat"`
	// Timeout is the agent's hard wall-clock limit (pool.timeout, the
	// agent's own, or the call's); StartToClose adds the staged stop.
	Timeout time.Duration `json:"timeout"`
	// KillGrace is the SIGTERM → SIGKILL wait.
	KillGrace time.Duration `json:"kill_grace"`
	// Attempts bounds the attempts of one call (retries after a worker
	// died or a child went silent).
	Attempts int `json:"attempts"`
	// Priority is the call's Temporal priority key (1 runs first; 0: the
	// server's default).
	Priority int `json:"priority,omitempty"`
}

// RunInput starts one execution of a plan.
type RunInput struct {
	RunID   string         `json:"run_id"`
	Plan    *workflow.Plan `json:"plan"`
	Source  string         `json:"source,omitempty"`
	Inputs  map[string]any `json:"inputs,omitempty"`
	Created time.Time      `json:"created"`
	// Journal is what earlier executions of the run recorded (a resume).
	Journal []workflow.JournalLine `json:"journal,omitempty"`
	// Limits per agent type ("" for the default).
	Limits map[string]CallLimits `json:"limits"`
	// Queue is the task queue the calls run on.
	Queue string `json:"queue"`
	// Code is the submitter's tree every call starts from (nil: the
	// workers' own checkouts).
	Code *codesnap.Snapshot `json:"code,omitempty"`
	// Stopped are the last heartbeats of the calls a cancel stopped, by
	// task id: a resume continues each from its transcript in the store
	// (and a writer from its partial change), on whichever worker.
	Stopped map[string]Heartbeat `json:"stopped,omitempty"`
	// StoppedIn is the snapshot each of those calls started from (a
	// writer continues in it, its change so far being against it).
	StoppedIn map[string]*codesnap.Snapshot `json:"stopped_in,omitempty"`
	// Tip is the run's tree so far: Code with the change of every writer
	// that finished put on in turn (nil: Code). A call starts from the tip
	// as it is when the call starts, and the submitter lands the last one.
	Tip *codesnap.Snapshot `json:"tip,omitempty"`
	// TipSig is the signature of the worker whose chain step made Tip
	// (tipsig.go); nil for a tip no step of this execution made.
	TipSig *TipSig `json:"tip_sig,omitempty"`
	// Results are, by task id, the results of the calls a worker signed
	// (with each signature), the earlier executions' with them: the
	// submitter shows a call's record only when it agrees with one a
	// worker key it trusts signed for the run (callsig.go).
	Results map[string]SignedResult `json:"results,omitempty"`
	// Chained says, by task id, what became of each writer's change in the
	// run's tree (a call's record's landed).
	Chained map[string]string `json:"chained,omitempty"`
	// ChainFails are, by task id, the failures of the writers' chain
	// steps a worker of the run signed (chaincheck.go): the submitter
	// shows a step's reason only when its signature checks.
	ChainFails map[string]ChainFailure `json:"chain_fails,omitempty"`
	// ChainTries are, by task id, the attempts each writer's chain step
	// took (its record's chain_attempts).
	ChainTries map[string]int `json:"chain_tries,omitempty"`
	// Signed is the submitter's signed submission (sign.go), handed to
	// every call: a worker runs only what a key it trusts signed.
	Signed *Signed `json:"signed,omitempty"`
	// Workers are the worker keys whose results the run uses (the
	// submitter's own and its trusted_workers, signed in its submission):
	// the workflow uses a call's result only when one of them signed it
	// for that call of this execution (wfcheck.go). nil: not checked (a
	// submitter with no allowlist, or a run from before it).
	Workers *WorkerSet `json:"workers,omitempty"`
	// Versions are the workflow changes (workflow.GetVersion's ids) and
	// the versions the submitter that started this execution requires its
	// replay to have taken (histreplay.go): every change its code knew, at
	// its highest. Nil: a run from before (it replays as it ran).
	Versions map[string]int `json:"versions,omitempty"`
	// Namespace is the Temporal namespace the submitter started the run
	// in (what its workers sign results for).
	Namespace string `json:"namespace,omitempty"`
	// Carried names, by task, the execution in which each result a resume
	// carried in Results was signed and checked (signed in the
	// submission): every other result must be this execution's.
	Carried map[string]string `json:"carried,omitempty"`
}

// RunOutput is an execution's end.
type RunOutput struct {
	// Input is the execution's input, its journal left out (what a resume
	// starts the next execution from).
	Input   RunInput               `json:"input"`
	Result  *workflow.Result       `json:"result"`
	Journal []workflow.JournalLine `json:"journal"`
	// Bound: the execution's workflow used a result only when its
	// signature named the call (boundResultsVersion), so its submitter
	// takes no result signed in it that names none (Engine.recordRefusal;
	// as the submitter's replay makes it, never the server's word).
	Bound bool `json:"bound,omitempty"`
}

// CallInput is one agent call as an activity runs it.
type CallInput struct {
	Spec call.Spec `json:"spec"`
	// Priority is the pool priority on the worker (lower runs first).
	Priority int `json:"priority,omitempty"`
	// Code is the submitter's tree: the worker materialises it in a fresh
	// directory for the call (nil: the worker's own checkout).
	Code *codesnap.Snapshot `json:"code,omitempty"`
	// From is where an earlier, cancelled execution of the run left the
	// call (its last heartbeat): used when this attempt has none.
	From *Heartbeat `json:"from,omitempty"`
	// Signed is the submission the call belongs to, as its submitter
	// signed it (nil: unsigned).
	Signed *Signed `json:"signed,omitempty"`
	// Seq numbers the call within its run's execution, from 1 in the
	// order the workflow schedules them: a worker runs no number past the
	// submission's MaxCalls, and each number once (callbound.go).
	Seq int `json:"seq,omitempty"`
	// Key is the plan call this is (its key in the plan's records, as the
	// workflow names it; "": a single call): its worker signs it into the
	// result with Seq and the input's digest (callBind), so no result is
	// taken for another call of the run.
	Key string `json:"key,omitempty"`
}

// CallOutput is what a call's activity (and a single call's workflow)
// returns: the verified result, plus what a resume needs to continue the
// call on any worker.
type CallOutput struct {
	call.Result
	// Last is the call's last heartbeat: its transcript in the store (and,
	// for a call a cancel stopped, a writer's change so far).
	Last *Heartbeat `json:"last,omitempty"`
	// Snapshot is the submitter's tree the call ran in (nil: the workers'
	// checkouts): a resume of a stopped writer continues in it.
	Snapshot *codesnap.Snapshot `json:"snapshot,omitempty"`
	// Started is when the attempt that returned it started, by the
	// server's clock (zero from a worker that does not say): the call's
	// queued time ends there and its run begins (calltimes of plan.go).
	Started time.Time `json:"started,omitzero"`
	// Sig is the worker's signature over the result for this call
	// (resultsig.go): a submitter takes a result only when a worker key
	// it trusts signed it.
	Sig *ResultSig `json:"sig,omitempty"`
	// Stopped is the result a single call's cancel came with, as its
	// worker signed it (callcancel.go): its submitter checks it and keeps
	// its figures alone (Engine.stoppedFigures); the output itself is
	// brood's cancelled ending.
	Stopped *SignedResult `json:"stopped,omitempty"`
	// refused: the submitter did not take the result (Engine.takeCall).
	refused bool
	// notHandedOn: why Last is not handed on to a follow-up
	// (handOnRefusal; "": it is).
	notHandedOn string
}

// Heartbeat is an activity's heartbeat details: what a retry on another
// worker needs to continue the call.
type Heartbeat struct {
	TaskID string `json:"task_id"`
	// Transcript is the child's transcript as last uploaded to the store
	// (TranscriptObject: a first line naming the task, then the
	// transcript), and Position the transcript's length in bytes then (how
	// far a retry continues from).
	Transcript Ref   `json:"transcript,omitzero"`
	Position   int64 `json:"position,omitempty"`
	// Result is the call's verified result, stored as soon as its child
	// ended: a retry after the worker died returns it instead of running
	// the call again.
	Result Ref `json:"result,omitzero"`
	// Code is the writer's change so far against the snapshot (its
	// partial patch): a retry elsewhere starts from the snapshot plus it.
	Code *codesnap.Result `json:"code,omitempty"`
	// Worker is who ran the attempt.
	Worker string `json:"worker,omitempty"`
	// Signed is the worker's signature over what the heartbeat hands on
	// (Transcript, Position, Code, Result) for this call: a worker
	// continues only from what a worker key it trusts signed
	// (workerkey.go).
	Signed *WorkerSig `json:"signed,omitempty"`
	// RefusedBy are the workers that refused the activity for its key
	// (untrusted.go): the last attempt's error names them.
	RefusedBy []string `json:"refused_by,omitempty"`
}

// AnswerRecord is a call's final answer as a worker names it in the
// fleet's store (answername.go), under a name every attempt of the
// activity computes: the answer's heartbeat (Answer, with no signature of
// its own) and the worker's signature that it is the final answer of this
// execution, activity and input (Final: a claim of its own, never a
// heartbeat's). A record of another version, or with no Final, is not
// taken: the retry continues from its heartbeat.
type AnswerRecord struct {
	Version int        `json:"v"`
	Answer  Heartbeat  `json:"answer"`
	Final   *WorkerSig `json:"final"`
}

// Progress is what the progress query answers: the latest event per phase.
type Progress struct {
	Events []workflow.Event `json:"events"`
	Agents int              `json:"agents"`
	// Chaining counts the writers whose child has ended and whose change
	// is being put into the run's tree or waits for its turn (a chain
	// step runs one at a time): what the pending chain activities alone
	// do not show (0 from a worker that does not count them).
	Chaining int `json:"chaining,omitempty"`
}

// PriorityKey maps a pool priority (0 runs first, 5 by default, 9 last) to
// a Temporal priority key (1 runs first, 5 last; the server's default, 3,
// is a pool priority of 4 or 5).
func PriorityKey(p int) int {
	return min(max(p/2+1, 1), 5)
}
