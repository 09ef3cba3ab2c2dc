// Package dispatch holds the on-disk records of a delegation, one directory
// per task under .brood/dispatch/<task_id>/ (envelope, session, result,
// output, dispatch log), the rules that turn a child's result into what the
// parent may see (verification, untrusted wrapping, lossless inline limit),
// and task ids. It spawns nothing: processes are package pool's, and the
// model-facing tools are package delegate's.
package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/model"
)

// File names inside a task directory.
const (
	EnvelopeFile = "envelope.json"
	SessionFile  = "session.jsonl"
	ResultFile   = "result.json"
	OutputFile   = "output.json"
	LogFile      = "dispatch-log.json"
	InboxDir     = "inbox" // steering messages waiting for the child
)

// Status of a dispatch's result.
const (
	StatusDone       = "done"
	StatusPartial    = "partial"
	StatusCheckpoint = "checkpoint"
	StatusFailed     = "failed"
	StatusKilled     = "killed"
	StatusCancelled  = "cancelled"
	StatusRunning    = "running" // no result yet (only in listings)
	StatusQueued     = "queued"  // waiting for a pool slot (only in listings)
)

// ValidStatus reports whether s is a terminal result status.
func ValidStatus(s string) bool {
	switch s {
	case StatusDone, StatusPartial, StatusCheckpoint, StatusFailed, StatusKilled, StatusCancelled:
		return true
	}
	return false
}

// NewID returns a new sortable, unique task id.
func NewID() string { return ulid.Make().String() }

// CheckID refuses anything that is not a task id (a ULID): ids come from
// models and command lines, and must never name a path.
func CheckID(id string) error {
	if _, err := ulid.ParseStrict(id); err != nil || len(id) != ulid.EncodedSize {
		return fmt.Errorf("%q is not a task id (26 letters and digits, as `brood tasks` lists them)", id)
	}
	return nil
}

// Root is the dispatch directory of a project.
func Root(projectRoot string) string { return filepath.Join(projectRoot, ".brood", "dispatch") }

// Dir is one task's directory.
func Dir(projectRoot, id string) string { return filepath.Join(Root(projectRoot), id) }

// Envelope is the handoff: what the parent asked, written before the child
// starts. The child reads everything it needs from here (long texts never go
// through argv).
type Envelope struct {
	Version      int    `json:"version"`
	TaskID       string `json:"task_id"`
	ParentTaskID string `json:"parent_task_id,omitempty"`

	// Handoff metadata (the delegation-patterns envelope).
	SourceAgent         string   `json:"source_agent"`
	TargetAgent         string   `json:"target_agent"`
	HandoffReason       string   `json:"handoff_reason"`
	AllowedDestinations []string `json:"allowed_destinations"` // agent types it may dispatch; empty = none, ["*"] = any
	HistoryPolicy       string   `json:"history_policy"`
	ExpectedReturn      string   `json:"expected_return"`
	ResumePointer       string   `json:"resume_pointer,omitempty"`

	// Prompt is what the child is asked now: the brief on the first run,
	// the follow-up on a resume. Brief keeps the original.
	Prompt    string `json:"prompt"`
	Brief     string `json:"brief,omitempty"`
	System    string `json:"system"`    // the child's whole system prompt
	Workspace string `json:"workspace"` // verified absolute path
	// ProjectRoot is where .brood/ lives (dispatch records, settings).
	ProjectRoot string `json:"project_root"`

	Tools         []string    `json:"tools"` // canonical tool names
	Permissions   Permissions `json:"permissions"`
	ReadOnly      bool        `json:"read_only"`
	Isolation     string      `json:"isolation,omitempty"`
	Network       *bool       `json:"network,omitempty"`
	Env           []string    `json:"env,omitempty"` // secret-looking variables the child keeps (its definition's allowlist)
	Model         string      `json:"model"`
	Effort        string      `json:"effort,omitempty"`
	MaxTurns      int         `json:"max_turns"`
	MaxTokens     int         `json:"max_tokens,omitempty"`
	TokenBudget   int64       `json:"token_budget,omitempty"`
	Depth         int         `json:"depth"`
	MaxDepth      int         `json:"max_depth"`
	TimeoutMS     int64       `json:"timeout_ms"`
	PingMS        int64       `json:"ping_ms"`
	Background    bool        `json:"background,omitempty"`
	Fork          bool        `json:"fork,omitempty"`
	InlineLimit   int         `json:"inline_limit,omitempty"`
	Concurrency   int         `json:"concurrency,omitempty"` // the child's own pool, if it delegates
	Created       time.Time   `json:"created"`
	ResumeCount   int         `json:"resume_count,omitempty"`
	FixAttempts   int         `json:"fix_attempts,omitempty"`
	BashTimeout   int64       `json:"bash_timeout_ms,omitempty"`
	OutputLimit   int         `json:"output_limit,omitempty"`
	ForceWorktree bool        `json:"force_worktree,omitempty"`
	// NoLandlock turns the child's kernel sandbox off (a setting).
	NoLandlock bool `json:"no_landlock,omitempty"`
	// IsolationRoot is the top of an isolated child's copy, and
	// IsolationDir the directory the child works in (set at spawn; for an
	// overlay both are the parent's own paths). Workspace stays the parent's.
	IsolationRoot string `json:"isolation_root,omitempty"`
	IsolationDir  string `json:"isolation_dir,omitempty"`
	// Notes record what the parent changed and why (e.g. a tool withdrawn).
	Notes []string `json:"notes,omitempty"`
	// TraceParent is the W3C traceparent of the parent's Task call span
	// (OpenTelemetry; empty when tracing is off).
	TraceParent string `json:"traceparent,omitempty"`
	// MCP are the MCP servers the child starts (or reaches) and which of
	// their tools it gets; specs keep their ${VAR} references.
	MCP []mcpspec.Server `json:"mcp,omitempty"`
}

// Permissions are the tool rules a child runs under. A child never has a
// human to ask, so whatever would ask is denied.
type Permissions struct {
	Mode  string   `json:"mode"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Ask   []string `json:"ask,omitempty"`
}

// Result is what the child reports, written atomically by the child (or, if
// the child died without one, by the parent from what it can recover).
type Result struct {
	TaskID       string      `json:"task_id"`
	Agent        string      `json:"agent"`
	Status       string      `json:"status"`
	Summary      string      `json:"summary"`
	FilesChanged []string    `json:"files_changed"`
	Confidence   string      `json:"confidence,omitempty"` // high, medium, low
	Usage        model.Usage `json:"usage"`                // this task's own model usage
	// ChildUsage is the usage of every dispatch below this one, rolled up.
	ChildUsage model.Usage `json:"child_usage"`
	Evidence   []string    `json:"evidence,omitempty"` // tool calls that back the summary
	Turns      int         `json:"turns"`
	Error      string      `json:"error,omitempty"`
	// ResumeHandle is set whenever the task can be continued.
	ResumeHandle string      `json:"resume_handle,omitempty"`
	Checkpoint   *Checkpoint `json:"checkpoint,omitempty"`
	Sandbox      string      `json:"sandbox,omitempty"`   // what enforced the tool scope
	Isolation    string      `json:"isolation,omitempty"` // how the workspace was isolated
	WrittenBy    string      `json:"written_by"`          // child | parent
	Finished     time.Time   `json:"finished"`
}

// Checkpoint is a structured stop that needs a human or the parent.
type Checkpoint struct {
	Type      string          `json:"type"`           // human-verify | decision | human-action
	Plan      string          `json:"plan,omitempty"` // {phase}-{plan}, as the child wrote it
	Completed int             `json:"completed"`
	Total     int             `json:"total"`
	Tasks     []CompletedTask `json:"tasks,omitempty"`
	Current   string          `json:"current,omitempty"`
	// CurrentNumber is N of "**Task N:**" (0 when the child gave none).
	CurrentNumber int    `json:"current_number,omitempty"`
	State         string `json:"state,omitempty"` // **Status:** blocked | awaiting verification | awaiting decision
	Blocker       string `json:"blocker,omitempty"`
}

// CompletedTask is one finished step of a checkpointed plan.
type CompletedTask struct {
	Name   string   `json:"name"`
	Commit string   `json:"commit,omitempty"`
	Files  []string `json:"files,omitempty"`
}

// Output is the raw process outcome, written by the pool.
type Output struct {
	PID        int       `json:"pid"`
	ExitCode   int       `json:"exit_code"`
	Signal     string    `json:"signal,omitempty"`
	KilledBy   string    `json:"killed_by"` // lifeguard | timeout | cancel | none
	WallMS     int64     `json:"wall_ms"`
	CPUMS      int64     `json:"cpu_ms"`
	PeakRSSKB  int64     `json:"peak_rss_kb"`
	StderrTail string    `json:"stderr_tail,omitempty"`
	Started    time.Time `json:"started"`
	Finished   time.Time `json:"finished"`
}

// Log is the dispatch log: diagnostics, never routing.
type Log struct {
	TaskID       string    `json:"task_id"`
	ParentTaskID string    `json:"parent_task_id,omitempty"`
	Agent        string    `json:"agent"`
	Depth        int       `json:"depth"`
	MaxDepth     int       `json:"max_depth"`
	Complexity   int       `json:"complexity"`
	Reasons      []string  `json:"complexity_reasons,omitempty"`
	Queued       time.Time `json:"queued"`
	Started      time.Time `json:"started,omitzero"`
	Finished     time.Time `json:"finished,omitzero"`
	Background   bool      `json:"background,omitempty"`
	Resumes      int       `json:"resumes,omitempty"`
	// PID and Host identify the live child, so a listing can tell a running
	// task from one whose process died without a result.
	PID int `json:"pid,omitempty"`
}

// WriteJSON writes v to path atomically: a temporary file in the same
// directory, synced, then renamed over the target. A crash leaves either the
// old file or the new one, never half of either.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// WriteFileAtomic is the tmp+rename write every record uses, synced to disk
// before the rename so that even a power cut leaves the old or the new file.
func WriteFileAtomic(path string, data []byte) error { return writeAtomic(path, data, true) }

// WriteJSONQuick is WriteJSON without the fsync: still tmp+rename (a crash of
// any process leaves the old or the new file), for diagnostic records that a
// power cut may lose (the dispatch log, the process outcome).
func WriteJSONQuick(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return writeAtomic(path, append(data, '\n'), false)
}

func writeAtomic(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ReadJSON reads path into v. A missing file is reported as fs.ErrNotExist.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Exists reports whether path exists.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// stateIgnore keeps brood's own records out of git and out of the tools'
// view of the tree (Glob, Grep and LS honour .gitignore files), while the
// project's agents and settings under .brood/ stay versionable.
const stateIgnore = "# brood's run records (written by brood)\ndispatch/\nrecords/\nsessions/\noutputs/\nbrood-debug.log\n"

// EnsureStateDir creates projectRoot/.brood with its .gitignore if missing.
func EnsureStateDir(projectRoot string) error {
	dir := filepath.Join(projectRoot, ".brood")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := filepath.Join(dir, ".gitignore")
	if Exists(p) {
		return nil
	}
	return WriteFileAtomic(p, []byte(stateIgnore))
}

// Owner is the parent's own record of what a task is: which agent, whether
// it is a fork, what isolation was asked for, and its brief. It lives under
// .brood/records/, outside every sandboxed child's writable set (unlike the
// task directory, which the child writes), so a resume can trust it.
type Owner struct {
	TaskID      string `json:"task_id"`
	Agent       string `json:"agent"`
	Fork        bool   `json:"fork,omitempty"`
	Isolation   string `json:"isolation,omitempty"`
	Description string `json:"description,omitempty"`
	Brief       string `json:"brief"`
	// Session is the root transcript's id when the root dispatched it
	// (brood tasks tree --session).
	Session string `json:"session,omitempty"`
}

// OwnersDir is where the root (and any unsandboxed parent) keeps the Owner
// records of the tasks it dispatches. A sandboxed parent keeps them in its
// own task directory instead (it cannot write here, and what it writes there
// only it may resume from).
func OwnersDir(projectRoot string) string { return filepath.Join(projectRoot, ".brood", "records") }

// OwnerPath is where a task's Owner record lives in dir.
func OwnerPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// WriteOwner records o in dir (creating it).
func WriteOwner(dir string, o Owner) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return WriteJSON(OwnerPath(dir, o.TaskID), o)
}
