// What a Dispatcher is built from: Config, and Extras from brood's main.

package spawn

import (
	"context"
	"io"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// Environment variables of the depth stamp.
const (
	EnvDepth    = depth.EnvDepth
	EnvMaxDepth = depth.EnvMaxDepth
)

// Config is what a Dispatcher needs from the process it runs in.
type Config struct {
	ProjectRoot string
	// AddDirs are the run's additional working directories (--add-dir,
	// permissions.additionalDirectories): named in each child's prompt,
	// and writable by an in-place writer (dispatch.Envelope.AddDirs).
	AddDirs []string
	// Hidden are paths no child of this dispatcher may read, beside
	// ~/.config/brood/mcp (`brood mcp --http --token-file`'s file).
	Hidden    []string
	Workspace string // absolute
	// CopyRoot, when set, is the top of the copy every child of this
	// dispatcher works in (a fleet worker's copy of the submitter's tree,
	// Mount.Root for an overlay, a full checkout where the worker has no
	// overlay): every writer is confined to it as an isolated child is,
	// and its change is the copy's preparer's to take. Without it a full
	// copy's writer worked "in place", confined to the worker's own
	// project, and could not write the copy at all.
	CopyRoot string
	// SharedCopy: Workspace is a copy other calls read too (a fleet
	// worker's checkout of a base, for a read-only call): no writer
	// starts in it (Dispatcher.ReadOnlyIn).
	SharedCopy bool
	// Mount, when set, is the copy every child of this dispatcher works
	// in (a fleet worker's overlay of the submitter's tree; Workspace is
	// its Dir): the child mounts it, a writer is confined to it as an
	// isolated child is, and its change is the mount's preparer's to take
	// (nothing is applied to Workspace here).
	Mount    *isolate.Mount
	Registry *registry.Registry
	Pool     *pool.Pool
	Settings settings.Settings
	// Exe and Args start a child: Exe Args... --mode json --task-id ID
	// --envelope PATH. Exe defaults to os.Executable().
	Exe string
	// ExeFunc, when set, replaces Exe and is called at each spawn with the
	// child's envelope: brood runs a child that may delegate
	// (dispatch.Envelope.MayDelegate; Extras), a lean binary one that
	// cannot, and which binary that is may take a check (package
	// childexe) that should not hold up the parent's start. extraEnv is
	// added to that child's environment (childexe.EnvVerified).
	ExeFunc func(env *dispatch.Envelope) (exe string, extraEnv []string)
	Args    []string
	// Env is the children's base environment (default os.Environ()).
	Env []string

	Depth    int // this process's depth (root 0)
	MaxDepth int // the tree-wide cap
	// Placed says Depth and MaxDepth are already depth.Current's decision
	// for this process (a root's, from its Factory): New does not read
	// /proc for it a second time. Unset, New scans, and what the kernel
	// shows beats what the caller was told.
	Placed       bool
	ParentTaskID string
	SourceAgent  string

	// Warm is how many children a root dispatcher keeps started ahead of
	// their tasks (settings pool.warm; warm.go). 0: none. Ignored below
	// the root.
	Warm int

	// ProjectFiles is the project's instruction files (CLAUDE.md,
	// AGENTS.md) as a prompt block: the children that get them
	// (settings.ProjectFiles.ForChild) have it in their system prompt, and
	// every child passes it on to its own.
	ProjectFiles string
	// ParentProjectFiles is the instruction-file block inside
	// ParentSystem: a definition with an empty body inherits ParentSystem
	// without it (a verbatim fork keeps it all).
	ParentProjectFiles string
	// ParentSystem is inherited by definitions with an empty body;
	// ParentModel by definitions without a model.
	ParentSystem string
	ParentModel  string
	ParentEffort string
	// ParentTools are the tool names this process's agent has: what a
	// definition without a tools list inherits.
	ParentTools []string
	// Allowed scopes which agent types this process may dispatch (nil: any).
	Allowed []string
	// IsFork is set in a fork child: it may not fork again.
	IsFork bool
	// Permissions are the rules children inherit.
	Permissions dispatch.Permissions
	// Ask puts a child's permission question to a person and waits for the
	// answer (nil: no person here; children deny as they always have).
	Ask AskFunc
	// ToolHooks runs the user's hooks for the children's own tool calls
	// (the root's; a child's relays up; nil: none, and no child asks).
	ToolHooks ToolHooks
	// OnEvent receives start, progress and stop events (may be nil).
	OnEvent func(Event)
	// Stderr gets one [DISPATCH] line per dispatch (nil: none, e.g. when a
	// TUI owns the terminal).
	Stderr io.Writer
	// DebugLog, when set, also receives the [DISPATCH] lines.
	DebugLog string
	// Lifetime bounds background children (default: never cancelled). When
	// it ends they are stopped in stages and recorded as cancelled, and the
	// idle warm children end.
	Lifetime context.Context
	// Redact scrubs secrets from what is written for children (a fork's
	// seed of this conversation).
	Redact func(string) string
	// Redactor, when set, is the one Redact belongs to: the secret values
	// it knows (its environment's, which no child's environment holds,
	// and the .env values, which a child's view of the tree may hide)
	// are handed to every child (tool.PassSecrets).
	Redactor *tool.Redactor
	// Owners holds the Owner records and verdicts of this dispatcher's
	// children, which a resume and a listing trust (nil: the project's
	// .brood/records).
	Owners *taskdir.Records
	// TaskDir is the task directory of the sandboxed child this
	// dispatcher runs in (nil: the root). Its children's directories are
	// made beneath it (taskdir.Tasks) and found there: its rules name no
	// other task directory.
	TaskDir *taskdir.Dir
	// Session is the root transcript's id, recorded in its children's
	// owner records unless a call names its own (call.Spec.Session: an
	// interactive session that opens another transcript).
	Session string
	// MCP are the MCP servers this process's agent has (configured ones,
	// for the root; its own, for a child): what a definition without a
	// tools list inherits and what mcpServers may name.
	MCP map[string]mcpspec.Spec
	// MCPHeld are configured servers held back with an untrusted project
	// (mcpspec.Config.Held): named by an agent, they are said to be held.
	MCPHeld map[string]string
	// TrustProject reports whether the user trusts a project file (a
	// definition that defines MCP servers inline); nil asks Grant.
	TrustProject func(path string) bool
	// Grant is the root's trust decision, passed down in every child's
	// envelope (a child's dispatcher has its envelope's, and nothing else).
	Grant *trust.Grant
	// SettingSources are the kinds of settings file the root read
	// (--setting-sources; nil every one), passed down in every child's
	// envelope as Grant is.
	SettingSources []string
	// Extras are what brood links beyond the child protocol: the output
	// schema validator and the Workflow tool.
	Extras Extras

	// ns is the dispatcher's answer on user namespaces when it shares
	// another's (In): nil, its own.
	ns *nsAnswer
}

// Extras is what a dispatcher gets from brood's main beyond the child
// protocol: the parts that link heavy dependencies (a JSON Schema
// validator whose package initialiser is most of a child's start-up, a
// plan parser) and that only a process that delegates needs. brood passes
// them to every dispatcher; brood-child links none of them, and the parent
// runs brood, not brood-child, for a child whose envelope may delegate
// (dispatch.Envelope.MayDelegate), so no child loses a tool or a check.
type Extras struct {
	// Schemas compiles calls' output schemas (call/jsonschema.Compile).
	// Without it a call with a schema is refused (call.ErrNoCompiler).
	Schemas call.Compiler
	// Tools are delegation tools beyond Task, TaskOutput and SendMessage,
	// built for each dispatcher (workflowtool.Tools: Workflow).
	Tools func(*Dispatcher) []tool.Tool
}

// Full reports whether e has everything a delegating process needs.
func (e Extras) Full() bool { return e.Schemas != nil && e.Tools != nil }

// Event is what the parent's stream learns about a dispatch: dispatch_start,
// progress, usage, budget_warning, budget_exceeded, ask, dispatch_stop,
// background_done (the child protocol's types, relayed up the tree).
type Event = protocol.Event
