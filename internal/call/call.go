// Package call is one agent call as every entry point asks for it — the Task
// tool, `brood subagent`, `brood tasks resume`, the workflow engine and the
// engines behind it: a Spec (agent, prompt, limits, isolation, output
// schema, parent) goes in, a verified Result comes out. A Runner is whatever
// can run one; the local one is the delegate package's Dispatcher. Locally
// a call is one pipeline (pipeline.go): Do, or Go for a background call,
// runs the stages of a Local's Attempt — acquire, prepare, isolate, exec,
// judge, land, record — with the output-schema loop (schema.go) around
// them, the same for every entry point.
//
// Nothing in Spec or Result is local to one machine: no path, no pid. A
// task id is an opaque handle that the same Runner understands again (to
// resume the call).
package call

import (
	"context"
	"encoding/json"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/protocol"
)

// Spec is one agent call.
type Spec struct {
	// Agent is the agent type (explore, plan, general-purpose, a project's
	// own definition).
	Agent string `json:"agent"`
	// Prompt is the complete brief (for a Resume: the follow-up).
	Prompt string `json:"prompt"`
	// Description is a short label (default: the prompt's first line).
	Description string `json:"description,omitempty"`
	// Context is background beside the brief (Hermes' goal + context): the
	// child's system prompt carries it as its own CONTEXT section.
	Context string `json:"context,omitempty"`
	// Isolation is "", "auto", "worktree" or "none" (the definition's
	// default, else auto).
	Isolation string `json:"isolation,omitempty"`
	// Together is how many writers are dispatched together with this call
	// (one workflow phase, one model turn): under auto isolation more than
	// one gives each its own copy of the tree, so they run in parallel.
	Together int `json:"together,omitempty"`
	// Limits lower the definition's (zero: the definition's own).
	Limits Limits `json:"limits,omitzero"`
	// Schema is a JSON Schema the call's output must validate against;
	// the child is told, and a wrong answer is retried (see Retries).
	Schema json.RawMessage `json:"schema,omitempty"`
	// Retries is how many times an output that does not validate is sent
	// back with what was wrong (default 2; -1: none).
	Retries int `json:"retries,omitempty"`
	// Parent names who asks (a task id, a workflow run): a label for the
	// records, never a privilege.
	Parent string `json:"parent,omitempty"`
	// Submitter is who a fleet worker runs the call for (the key that
	// signed its submission and the workflow it signed), recorded in a new
	// task's owner record: the worker continues the task only for them.
	// Set by the worker after it checked the signature, never read from a
	// call's JSON.
	Submitter string `json:"-"`
	// Resume continues this earlier task, its transcript intact, with
	// Prompt as the follow-up, instead of starting a new one.
	Resume string `json:"resume,omitempty"`
	// Continue (with Resume) picks up a call whose caller was interrupted:
	// a task that had finished is returned as recorded, without running
	// again; one that was stopped is resumed from its transcript with
	// ContinuePrompt; one that never started starts now under that id,
	// with Prompt as its brief.
	Continue bool `json:"continue,omitempty"`
	// TaskID is the id a new task gets (default: a fresh one), so that a
	// journal can name the task before it starts. It must be new.
	TaskID string `json:"task_id,omitempty"`
	// Session names the root transcript the call is made from, recorded in
	// its task's owner record (brood tasks tree --session); empty: the
	// runner's own (spawn.Config.Session). An interactive session that
	// opens another transcript names it here, call by call.
	Session string `json:"session,omitempty"`

	// Transcript, with TaskID, starts the task anew from the conversation
	// in this file (another worker's run of the same call, fetched from the
	// fleet's store): the child continues it with ContinuePrompt. It never
	// crosses a process boundary; the brief and privileges still come from
	// the spec, only the conversation from the file.
	Transcript string `json:"-"`
	// NextTurn, with Transcript, is the turn the child continues that
	// conversation with (a follow-up prompt); empty: ContinuePrompt.
	NextTurn string `json:"-"`

	// Fork, History and CallID seed a fork with the caller's conversation
	// (the Task tool only; never crosses a process boundary); CallID also
	// names the Task call in the dispatch_start event (stream-json's
	// tool_use_id).
	Fork    bool            `json:"-"`
	History []model.Message `json:"-"`
	CallID  string          `json:"-"`
	// Background marks a task that runs detached from its caller (Go):
	// recorded in its envelope and dispatch log.
	Background bool `json:"-"`
	// Watch is how the caller follows the call as it runs, here (it
	// never crosses a process boundary).
	Watch Watch `json:"-"`
}

// Watch is how a caller follows one call as it runs: typed on its Spec,
// not hidden in its context.
type Watch struct {
	// Events gets the call's own events (start, progress, stop, and its
	// descendants' relayed ones) besides the runner's own sink: a caller
	// serving several calls at once (the MCP server, a workflow run in the
	// TUI) tells them apart this way.
	Events func(protocol.Event)
	// Alive is told every time the call's child shows it is alive (every
	// line it prints, its heartbeat pings included): a remote caller
	// passes these on (a Temporal worker turns them into its activity's
	// heartbeats, so a silent child is seen on the fleet too).
	Alive func()
	// Turn, when set, makes the call's child stop once each model answer
	// is in its transcript (before the answer's tools run, or the run ends
	// with it) and at every turn boundary (before each model request after
	// its first) until Turn returns:
	// everything the child did so far is in its transcript then, and Turn
	// makes it durable where a retry elsewhere finds it (a Temporal worker
	// uploads the transcript and records it in a heartbeat the server
	// has), so a call killed at any moment is continued from its last
	// finished turn and never asks a finished turn again. Turn gets the
	// call's context and the child's word for the turn's number; it must
	// return when ctx ends. false: the call is no one's now (its attempt
	// was cancelled or runs elsewhere), so the child is never told to go
	// on and asks the model nothing more. The boundary of an answer that
	// ends the run is not waited for by the child (it only writes its
	// result and exits meanwhile), but the call does not return before
	// Turn has.
	Turn func(ctx context.Context, turn int) bool
	// Final, when set, is called instead of Turn at the boundary of an
	// answer the child says ends its run (it waits for no reply there):
	// a fleet worker may make that answer durable another way than a
	// turn's (the child's word decides only how, never whether).
	Final func(ctx context.Context, turn int) bool
}

// Watched is r with w set on every call that sets no Watch of its own
// (a workflow run's calls, which the executor makes).
func Watched(r Runner, w Watch) Runner { return watched{r, w} }

type watched struct {
	r Runner
	w Watch
}

func (w watched) Call(ctx context.Context, s Spec) (*Result, error) {
	if s.Watch.Events == nil {
		s.Watch.Events = w.w.Events
	}
	if s.Watch.Alive == nil {
		s.Watch.Alive = w.w.Alive
	}
	if s.Watch.Turn == nil {
		s.Watch.Turn, s.Watch.Final = w.w.Turn, w.w.Final
	}
	return w.r.Call(ctx, s)
}

// ContinuePrompt is the follow-up an interrupted call is resumed with.
const ContinuePrompt = "You were interrupted (the run that started you stopped). Continue the task from where you left off and give your final answer."

// Limits are per-call bounds; each only ever lowers the definition's.
type Limits struct {
	MaxTurns    int   `json:"max_turns,omitempty"`
	TimeoutMS   int64 `json:"timeout_ms,omitempty"`
	TokenBudget int64 `json:"token_budget,omitempty"`
}

// Result is a finished call.
type Result struct {
	TaskID string `json:"task_id"`
	Agent  string `json:"agent"`
	// Status is done, partial, checkpoint, failed, killed or cancelled.
	Status  string `json:"status"`
	Summary string `json:"summary"`
	Error   string `json:"error,omitempty"`
	// Output is the validated JSON answer of a call with a Schema.
	Output json.RawMessage `json:"output,omitempty"`
	// Usage is the call's own usage plus its children's.
	Usage        model.Usage `json:"usage"`
	FilesChanged []string    `json:"files_changed,omitempty"`
	// Failures are verification failures (records that do not hold) and,
	// with a Schema, why the last answer did not validate.
	Failures []string `json:"failures,omitempty"`
	// Attempts counts the runs of the task (1 + schema retries).
	Attempts int `json:"attempts"`
	// Worker is the fleet worker whose child ran the call ("" from the
	// local engine): a plan's record names it, as a single call's
	// history does.
	Worker string `json:"worker,omitempty"`
	// Text is what a parent model sees: the wrapped, verified summary.
	Text string `json:"text,omitempty"`
	// Code is a fleet worker's change to the submitter's tree, a
	// codesnap.Result (refs into the fleet's store) that the submitter
	// applies; nil from a local engine and from a read-only agent.
	Code json.RawMessage `json:"code,omitempty"`
	// Patch is what became of the change of a child that worked on a copy
	// of the tree: PatchApplied, PatchNotApplied (a conflict with what
	// landed before it: the child's work is not in the tree, its patch is
	// kept), or "" (it worked in place, or changed nothing).
	Patch string `json:"patch,omitempty"`
	// QueuedMS is how long the call waited before its child ran: for a
	// pool slot here, for a worker on the fleet (from its schedule, a
	// single call's from its submit, to the start of the attempt that
	// ran it; a retried call's earlier attempts in it). RanMS is from
	// that start to its end. Zero: not known.
	QueuedMS int64 `json:"queued_ms,omitempty"`
	RanMS    int64 `json:"ran_ms,omitempty"`

	// Record and Process are the local records behind the result, for
	// the CLI's --json (nil from a remote engine).
	Record  *dispatch.Result `json:"-"`
	Process *dispatch.Output `json:"-"`
	// Stages are the stages the call's last attempt ran through, in
	// order (nil for a finished task's recorded result, and remote).
	Stages []Stage `json:"-"`
}

// What became of an isolated child's change (Result.Patch).
const (
	PatchApplied    = "applied"
	PatchNotApplied = dispatch.PatchNotApplied
	// PatchPartlyApplied: the landing failed partway and could not put
	// back all it wrote (isolate.Outcome.Partial); the call is failed.
	PatchPartlyApplied = dispatch.PatchPartlyApplied
)

// StatusDone is the status of a call that finished as asked.
const StatusDone = dispatch.StatusDone

// OK reports whether the call finished done, its records verified and (with
// a schema) its output valid: a result a plan may use.
func (r *Result) OK() bool {
	return r != nil && r.Status == dispatch.StatusDone && len(r.Failures) == 0
}

// Runner runs one agent call to its verified end. A refusal before any
// child starts (unknown agent, depth cap, bad schema) is an error; once one
// has started every ending is a Result.
type Runner interface {
	Call(ctx context.Context, s Spec) (*Result, error)
}
