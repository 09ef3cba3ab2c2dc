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
	"github.com/broodhq/brood/internal/limits"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// File names inside a task directory (package taskdir owns them).
const (
	EnvelopeFile   = taskdir.Envelope
	SessionFile    = taskdir.Session
	ResultFile     = taskdir.Result
	OutputFile     = taskdir.Output
	LogFile        = taskdir.Log
	InboxDir       = taskdir.Inbox // steering messages waiting for the child
	TreeBeforeFile = taskdir.TreeBefore
)

// Status of a dispatch's result.
const (
	StatusDone       = "done"
	StatusPartial    = "partial"
	StatusCheckpoint = "checkpoint"
	StatusFailed     = "failed"
	StatusKilled     = "killed"
	StatusCancelled  = "cancelled"
	// StatusRejected is the parent's, never a child's: the child said done
	// and a guardrail whose policy is reject
	// found its result unbacked or out of scope (Verdict.Rejected). It is
	// resumable, with the reason as the follow-up.
	StatusRejected = "rejected"
	// StatusNotApplied is the parent's, never a child's: the child said
	// done on a copy of the tree and its change did not land in the tree
	// (Verdict.Patch), the word a plan's call and `brood subagent` have
	// for it.
	StatusNotApplied = "not-applied"
	StatusRunning    = "running" // no result yet (only in listings)
	StatusQueued     = "queued"  // waiting for a pool slot (only in listings)
)

// Finished reports whether s is a status a task ends in: a child's
// (ValidStatus) or its parent's rejection.
func Finished(s string) bool { return ValidStatus(s) || s == StatusRejected }

// ValidStatus reports whether s is a terminal status a child may write in
// its result.json (rejected is its parent's verdict, never its own).
func ValidStatus(s string) bool {
	switch s {
	case StatusDone, StatusPartial, StatusCheckpoint, StatusFailed, StatusKilled, StatusCancelled:
		return true
	}
	return false
}

// NewID returns a new sortable, unique task id.
func NewID() string { return taskdir.NewID() }

// CheckID refuses anything that is not a task id (a ULID): ids come from
// models and command lines, and must never name a path.
func CheckID(id string) error { return taskdir.CheckID(id) }

// Root is the dispatch directory of a project.
func Root(projectRoot string) string { return taskdir.Open(projectRoot).DispatchRoot() }

// Dir is one task's directory: where it is (top-level or nested:
// taskdir.Project.Find), else where a top-level one would be.
func Dir(projectRoot, id string) string {
	if td, err := taskdir.Open(projectRoot).Find(id); err == nil {
		return td.Path()
	}
	return filepath.Join(Root(projectRoot), id)
}

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
	// Roster, for a fork with the Task tool, is the scope its Task tool's
	// description lists: its parent's, so the fork's tools read as its
	// parent's (a verbatim fork's cached prefix), also at the depth cap,
	// where AllowedDestinations is empty.
	Roster         []string `json:"roster,omitempty"`
	HistoryPolicy  string   `json:"history_policy"`
	ExpectedReturn string   `json:"expected_return"`
	ResumePointer  string   `json:"resume_pointer"` // where a resume continues: written at dispatch, updated at each resume

	// Prompt is what the child is asked now: the brief on the first run,
	// the follow-up on a resume. Brief keeps the original.
	Prompt string `json:"prompt"`
	Brief  string `json:"brief,omitempty"`
	// Context is the background the Task call gave beside the brief; the
	// child's system prompt (a fork's brief) has it as a CONTEXT section.
	Context   string `json:"context,omitempty"`
	System    string `json:"system"`    // the child's whole system prompt
	Workspace string `json:"workspace"` // verified absolute path
	// ProjectRoot is where .brood/ lives (dispatch records, settings).
	ProjectRoot string `json:"project_root"`

	Tools       []string    `json:"tools"` // canonical tool names
	Permissions Permissions `json:"permissions"`
	ReadOnly    bool        `json:"read_only"`
	Isolation   string      `json:"isolation,omitempty"`
	Network     *bool       `json:"network,omitempty"` // false: the child's tool processes get no network
	// UnixSockets: the user's own sandbox.unix_sockets lets the child's
	// tool processes make unix sockets (docker.sock, ssh and gpg agents,
	// D-Bus); without it they cannot.
	UnixSockets   bool       `json:"unix_sockets,omitempty"`
	Limits        limits.Set `json:"limits,omitzero"` // what the child may consume (the pool enforces it)
	Env           []string   `json:"env,omitempty"`   // secret-looking variables the child keeps (its definition's allowlist)
	Model         string     `json:"model"`
	Effort        string     `json:"effort,omitempty"`
	MaxTurns      int        `json:"max_turns"`
	MaxTokens     int        `json:"max_tokens,omitempty"`
	TokenBudget   int64      `json:"token_budget,omitempty"`
	Depth         int        `json:"depth"`
	MaxDepth      int        `json:"max_depth"`
	TimeoutMS     int64      `json:"timeout_ms"`
	PingMS        int64      `json:"ping_ms"`
	Background    bool       `json:"background,omitempty"`
	Fork          bool       `json:"fork,omitempty"`
	InlineLimit   int        `json:"inline_limit,omitempty"`
	Concurrency   int        `json:"concurrency,omitempty"` // the child's own pool, if it delegates
	Created       time.Time  `json:"created"`
	ResumeCount   int        `json:"resume_count,omitempty"`
	FixAttempts   int        `json:"fix_attempts,omitempty"`
	BashTimeout   int64      `json:"bash_timeout_ms,omitempty"`
	OutputLimit   int        `json:"output_limit,omitempty"`
	ForceWorktree bool       `json:"force_worktree,omitempty"`
	// NoLandlock turns the child's kernel sandbox off (a setting).
	NoLandlock bool `json:"no_landlock,omitempty"`
	// SyncTurns makes the child wait for its parent at every turn
	// boundary (protocol.Turn): set by the parent for a call whose caller
	// makes the transcript durable there (call.Watch.Turn: a fleet worker).
	SyncTurns bool `json:"sync_turns,omitempty"`
	// IsolationRoot is the top of an isolated child's copy, and
	// IsolationDir the directory the child works in (set at spawn; for an
	// overlay both are the parent's own paths). Workspace stays the parent's.
	IsolationRoot string `json:"isolation_root,omitempty"`
	IsolationDir  string `json:"isolation_dir,omitempty"`
	// AddDirs are the run's additional working directories (--add-dir,
	// permissions.additionalDirectories; absolute): named in the child's
	// prompt, writable by an in-place writer as its tree is, passed on to
	// its own children.
	AddDirs []string `json:"add_dirs,omitempty"`
	// ProjectFiles is the project's instruction files (CLAUDE.md,
	// AGENTS.md) as the root read them, for the child's own subagents
	// that get them (System already holds them if this child does).
	ProjectFiles string `json:"project_files,omitempty"`
	// Notes record what the parent changed and why (e.g. a tool withdrawn).
	Notes []string `json:"notes,omitempty"`
	// TraceParent is the W3C traceparent of the parent's Task call span
	// (OpenTelemetry; empty when tracing is off).
	TraceParent string `json:"traceparent,omitempty"`
	// MCP are the MCP servers the child starts (or reaches) and which of
	// their tools it gets; specs keep their ${VAR} references.
	MCP []mcpspec.Server `json:"mcp,omitempty"`
	// Trust is the root's project trust decision, passed down: the child's
	// own subagents get it, and no more (a child decides nothing itself).
	Trust *trust.Grant `json:"trust,omitempty"`
	// SettingSources are the kinds of settings file the root read (user,
	// project, local: claude -p's --setting-sources): a child that
	// delegates reads only those, and passes them on. null reads every
	// one; [] none (so no omitempty).
	SettingSources []string `json:"setting_sources"`
}

// MayDelegate reports whether the child gets delegation tools: it has Task
// and is a fork (whose tools read as its parent's, even at the depth cap)
// or may dispatch some agent type below the cap. The parent runs brood for
// such a child and brood-child, which cannot delegate, for the others.
func (e *Envelope) MayDelegate() bool {
	return slices.Contains(e.Tools, "Task") && (e.Fork || (len(e.AllowedDestinations) > 0 && e.Depth < e.MaxDepth))
}

// Permissions are the tool rules a child runs under. A child never has a
// human to ask, so whatever would ask is denied.
type Permissions struct {
	Mode  string   `json:"mode"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	// Held are the untrusted project's allow rules the gate held back:
	// they allow nothing, and a refusal they would have allowed says so,
	// with what else trusting the project grants (HeldAlso, brood's
	// words: settings.ProjectTrust.Kinds).
	Held     []trust.HeldRule `json:"held,omitempty"`
	HeldAlso []string         `json:"held_also,omitempty"`
	// AskFrom are the settings files of each ask rule, for the refusal
	// by one to say where to remove it.
	AskFrom []trust.RuleFiles `json:"ask_from,omitempty"`
	// Only are an untrusted project agent's tool specifiers (`tools:
	// Bash(python3:*)`), from OnlyFile: a call of a tool they name must
	// be one they cover, and the rules above still decide it (they allow
	// nothing until the user trusts the project).
	Only     []string `json:"only,omitempty"`
	OnlyFile string   `json:"only_file,omitempty"`
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
	// Config is the parent's report of the child's changes to brood's and
	// Claude Code's configuration, and what became of them (refused,
	// undone, allowed); one line each.
	Config    []string  `json:"config,omitempty"`
	WrittenBy string    `json:"written_by"` // child | parent
	Finished  time.Time `json:"finished"`
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
	// PIDNS is the inode of the PID namespace PID is numbered in (its
	// recorder's, OwnPIDNS): a nested task's parent, init of a namespace
	// of its own, numbers it there. A reader in another namespace cannot
	// check that pid (0: an older record, checked as it was).
	PIDNS uint64 `json:"pid_ns,omitempty"`
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
	if td, err := taskdir.FromPath(dir); err == nil {
		// A record in a task directory: written beneath it, no link
		// followed (the child can write there).
		return td.WriteFile(filepath.Base(path), data, sync)
	}
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
	if td, err := taskdir.FromPath(filepath.Dir(path)); err == nil {
		return td.ReadJSON(filepath.Base(path), v)
	}
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

// EnsureStateDir creates projectRoot/.brood with its .gitignore if missing.
func EnsureStateDir(projectRoot string) error { return taskdir.Open(projectRoot).EnsureWritable() }
