// Package delegate is delegation as the model sees it — the Task, TaskOutput
// and SendMessage tools — and both ends of the child protocol: the parent's
// Dispatcher (envelope, depth cap, pool, verification, untrusted wrapping)
// and RunChild, which a child brood process runs. It imports the agent loop's
// interfaces; the agent loop never imports it.
package spawn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/model"
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

// Dispatcher spawns and tracks the children of one process.
type Dispatcher struct {
	cfg Config

	mu         sync.Mutex
	childUsage model.Usage
	// claimed maps every task id this dispatcher knows (its children and
	// the descendants they reported) to the direct child whose subtree it
	// is in (hookwire.go).
	claimed map[string]string
	bg      bgState

	// turn is the writers counted in the caller's current turn (autoiso.go).
	turn turnCount

	// inPlace counts the writers of this dispatcher working in place on
	// the tree (prepared and not yet finished): a writer that arrives
	// while one is, gets an isolated copy instead of waiting (auto).
	inPlace int

	// cfgLive are the configuration guards of the in-place writers now
	// running (configguard.go): the user's own writes are taken into them.
	cfgMu   sync.Mutex
	cfgLive []*configGuard

	isoOnce sync.Once
	iso     *isolate.Isolator
	// ns is whether children start in a user namespace here (userns.go).
	ns *nsAnswer

	warm         *warmSet // nil: every child starts cold
	warmNoteOnce sync.Once

	baseOnce sync.Once
	base     *isolate.PolicyBase // childPolicy's shared parts (isolation.go)
	layer    layerWarm           // the layer's warm-up (isolate.WarmLayer)
}

// layerWarm runs a dispatcher's warm-ups of its children's layer
// (isolate.PolicyBase.WarmLayer) in the background, one at a time (a
// spawn that comes while one is at work starts none: WarmLayer would find
// the layer warming), none once the dispatcher is closed; close waits for
// the one at work.
type layerWarm struct {
	mu     sync.Mutex
	busy   bool
	closed bool
	wg     sync.WaitGroup
}

// warm runs f in the background unless one is at work or w is closed.
func (w *layerWarm) warm(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy || w.closed {
		return
	}
	w.busy = true
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
		w.mu.Lock()
		w.busy = false
		w.mu.Unlock()
	}()
}

// close waits for the warm-up at work; none starts after.
func (w *layerWarm) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.wg.Wait()
}

// New returns a Dispatcher.
func New(cfg Config) (*Dispatcher, error) {
	// What the kernel shows of this process's place in the tree (package
	// depth) beats what the caller was told: a process below a brood child
	// is never shallower, nor its cap higher, than the markers say.
	if !cfg.Placed {
		if k := depth.Current(cfg.MaxDepth, func(string) string { return "" }); k.Below {
			cfg.Depth, cfg.MaxDepth = max(cfg.Depth, k.Depth), min(cfg.MaxDepth, k.Max)
		}
	}
	if cfg.Exe == "" && cfg.ExeFunc == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("delegate: cannot find brood's own binary: %w", err)
		}
		cfg.Exe = exe
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Owners == nil {
		r := dispatch.Records(cfg.ProjectRoot)
		cfg.Owners = &r
	}
	if cfg.Pool == nil {
		conc := cfg.Settings.Pool.Concurrency
		if cfg.Depth > 0 {
			conc = cfg.Settings.Pool.NestedConcurrency
		}
		cfg.Pool = pool.New(pool.Config{
			Concurrency:      conc,
			HeartbeatTimeout: cfg.Settings.Pool.HeartbeatTimeout.Duration,
			KillGrace:        cfg.Settings.Pool.KillGrace.Duration,
			Containment:      cfg.Settings.Pool.Containment,
			Limits:           settingsLimits(cfg.Settings),
		})
	}
	d := newDispatcher(cfg)
	if cfg.Lifetime != nil && d.warm != nil {
		// Idle warm children end with the session's lifetime. (Without
		// any, nothing is registered: a fleet worker makes a dispatcher
		// per call (In), each of which would stay in the lifetime's list
		// until the worker ends.)
		context.AfterFunc(cfg.Lifetime, d.Close)
	}
	return d, nil
}

// CanDelegate reports whether this process is below the depth cap.
func (d *Dispatcher) CanDelegate() bool { return d.cfg.Depth < d.cfg.MaxDepth }

// Depth is this process's depth and the tree-wide cap.
func (d *Dispatcher) Depth() (depth, max int) { return d.cfg.Depth, d.cfg.MaxDepth }

// Settings are the settings this dispatcher was built with.
func (d *Dispatcher) Settings() settings.Settings { return d.cfg.Settings }

// ProjectRoot is the project this dispatcher's records are kept in.
func (d *Dispatcher) ProjectRoot() string { return d.cfg.ProjectRoot }

// AgentNames are the agent types this dispatcher may dispatch.
func (d *Dispatcher) AgentNames() []string { return d.names() }

// ChildUsage is the usage of every finished dispatch below this process.
func (d *Dispatcher) ChildUsage() model.Usage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.childUsage
}

// job is a prepared dispatch: its records exist on disk, its process not yet.
type job struct {
	name   string
	prio   int
	env    *dispatch.Envelope
	dir    string
	td     *taskdir.Dir
	lg     *dispatch.Log
	unlock func() // the task's lock, held from prepare until run ends
	desc   string
	callID string // the tool_use id of the Task call that asked for it ("" for other callers)
	// inPlace is set for an auto writer counted in Dispatcher.inPlace.
	inPlace bool
	// warm is the child started ahead for this task (nil: a cold start).
	warm *warmSlot
	// owner is the new task's owner record on its way to disk (nil: synced,
	// or a resume's, written before this run).
	owner *taskdir.Durable
}

// prepare checks a request and writes the envelope and dispatch log.
// definition is the agent definition a new dispatch runs, once the depth
// cap and the delegation scope allow it (call.StageAcquire).
func (d *Dispatcher) definition(req call.Spec) (*registry.Definition, error) {
	if req.Fork && req.Agent == "" {
		if !d.CanDelegate() {
			_, err := d.check(req)
			return nil, err
		}
		return forkDef(), nil
	}
	return d.check(req)
}

// prepareNew writes a new dispatch's records (call.StagePrepare), each
// once: its limits lowered to lim, its trace context tp, whether it waits
// at turn boundaries and a continued conversation (req.Transcript, seeded
// first) in the envelope's one write.
func (d *Dispatcher) prepareNew(ctx context.Context, req call.Spec, def *registry.Definition, lim call.Limits, tp string) (*job, error) {
	// The pool's one-time containment probe runs while the records are
	// written, not after them in the first child's spawn.
	d.cfg.Pool.Warm()
	id := req.TaskID
	if id == "" {
		id = d.newTaskID()
	} else if !d.claim(id, id) {
		return nil, fmt.Errorf("task %s is one a child reported below itself; use another task id", id)
	}
	td, err := d.newTaskDir(id)
	if err != nil {
		return nil, err
	}
	dir := td.Path()
	if td.Has(taskdir.Envelope) {
		return nil, fmt.Errorf("task %s exists already; resume it instead", id)
	}
	if err := td.Create(); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	env := d.envelope(id, def, req)
	if req.Background {
		env.Background = true
	}
	env.TraceParent = tp
	lowerLimits(env, lim)
	inPlace := d.chooseIsolation(env, def, req)
	d.checkIsolation(env)
	holdBashReadOnly(env)
	if d.cfg.Depth == 0 && d.cfg.Mount == nil {
		// The layer its children's domain stacks (isolate.KnownLayer),
		// built once per dispatcher: beside the records, not on the
		// thread the first child starts from. (A copy: the spawn goes
		// on filling the envelope. Its shared paths do not depend on
		// the task directory, which a warm child's may replace.)
		e := *env
		d.layer.warm(func() { d.policyBase().WarmLayer(&e, dir) })
	}
	// A warm child of this shape, started for a task id of its own, makes
	// this dispatch that task (warm.go): its id and directory replace the
	// fresh ones.
	warm := d.takeWarm(ctx, env, req)
	if warm != nil {
		_ = os.Remove(dir)
		id, td, dir, env.TaskID = warm.id, warm.td, warm.td.Path(), warm.id
	}
	if req.Fork {
		if err := d.prepareFork(env, def, req, td); err != nil {
			return nil, err
		}
	}
	unlock, err := dispatch.LockTask(dir)
	if err != nil {
		return nil, err
	}
	// The caller keeps each turn durable (a fleet worker): the child waits
	// for it at every turn boundary (turnwire.go).
	env.SyncTurns = req.Watch.Turn != nil
	if req.Transcript != "" {
		if err := seedTranscript(td, env, req.Transcript, req.NextTurn); err != nil {
			unlock()
			return nil, err
		}
	}
	own := ownerOf(env, def, req)
	own.Session, own.Version = cmp.Or(req.Session, d.cfg.Session), dispatch.OwnerVersion
	// In place at once (every process reads it; a crash of brood loses
	// nothing), on disk in the background: record waits for that before it
	// writes the verdict, so a power cut loses an owner record only while
	// no verdict says the task ran (docs/performance.md, "spawn path").
	durable, err := d.cfg.Owners.WriteOwnerDurable(own.TaskID, own)
	if err != nil {
		unlock()
		return nil, err
	}
	// Not synced: the owner record is what a resume rebuilds the envelope
	// from and what a listing trusts; an envelope a power cut left empty is
	// listed as unreadable, never believed.
	if err := td.WriteJSON(taskdir.Envelope, env, false); err != nil {
		unlock()
		return nil, err
	}
	score, why := dispatch.Complexity(req.Prompt)
	lg := &dispatch.Log{
		TaskID: id, ParentTaskID: d.cfg.ParentTaskID, Agent: def.Name,
		Depth: env.Depth, MaxDepth: env.MaxDepth, Complexity: score, Reasons: why,
		Queued: time.Now().UTC(), Background: env.Background,
	}
	// The log is first written when the process starts (with its pid);
	// until then the held lock says the task is queued, and a task with an
	// envelope, no log and no lock never started.
	j := &job{name: def.Name, prio: priorityOf(def), env: env, dir: dir, td: td, lg: lg, unlock: unlock, warm: warm, desc: req.Description, callID: req.CallID, owner: durable}
	if inPlace && env.Isolation == "" {
		j.inPlace = true
		j.unlock = func() { d.leaveInPlace(); unlock() }
	} else if inPlace {
		d.leaveInPlace()
	}
	return j, nil
}

// ownerOf is the parent's own record of a new dispatch: what a resume and
// a listing trust, since the child may rewrite its envelope.
func ownerOf(env *dispatch.Envelope, def *registry.Definition, req call.Spec) dispatch.Owner {
	o := dispatch.Owner{
		TaskID: env.TaskID, Agent: def.Name, Fork: req.Fork, Isolation: req.Isolation, Description: req.Description, Brief: req.Prompt, Context: req.Context,
		Model: env.Model, Effort: env.Effort, ParentTaskID: env.ParentTaskID, SourceAgent: env.SourceAgent,
		Depth: env.Depth, Workspace: env.Workspace, Created: env.Created, Asker: req.Parent,
		Submitter: req.Submitter,
	}
	if env.Fork {
		o.HistoryPolicy = env.HistoryPolicy
		if env.HistoryPolicy == policyForkVerbatim {
			o.System = env.System
		}
	}
	return o
}

// check applies the depth cap and the delegation scope (defence in depth:
// the Task tool is only registered below the cap in the first place).
func (d *Dispatcher) check(req call.Spec) (*registry.Definition, error) {
	if !d.CanDelegate() {
		return nil, fmt.Errorf("delegation refused: this agent is at depth %d and the tree-wide cap is %d (maxSubagentDepth); do the work yourself", d.cfg.Depth, d.cfg.MaxDepth)
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, errors.New("Task needs a prompt: the subagent sees nothing of this conversation, so pass everything it needs")
	}
	def, ok := d.cfg.Registry.Get(req.Agent)
	if !ok {
		return nil, fmt.Errorf("unknown subagent_type %q; available: %s", req.Agent, strings.Join(d.names(), ", "))
	}
	if d.cfg.Allowed != nil && !allowed(d.cfg.Allowed, def.Name) {
		return nil, fmt.Errorf("subagent_type %q is outside this agent's delegation scope; it may dispatch: %s", def.Name, strings.Join(d.cfg.Allowed, ", "))
	}
	if def.Unresolvable {
		return nil, fmt.Errorf("agent %q (%s) names no tool brood provides, so it cannot run; fix its tools: line", def.Name, def.Path)
	}
	return def, nil
}

func (d *Dispatcher) names() []string {
	var out []string
	for _, def := range d.cfg.Registry.All() {
		if d.cfg.Allowed == nil || allowed(d.cfg.Allowed, def.Name) {
			out = append(out, def.Name)
		}
	}
	return out
}

// writeLog writes a task's dispatch log. A job's log is written by one
// goroutine at a time (prepareResume, then the pool at the start, or run
// for a run that never started), so no lock is held: a dispatcher-wide one
// made K children's starts wait on each other's file creation.
func (d *Dispatcher) writeLog(td *taskdir.Dir, lg *dispatch.Log) {
	_ = td.WriteJSON(taskdir.Log, lg, false)
}

func (d *Dispatcher) emit(e Event) {
	if e.Parent == "" {
		e.Parent = d.cfg.ParentTaskID
	}
	if d.cfg.OnEvent != nil {
		d.cfg.OnEvent(e)
	}
}

// announce prints the [DISPATCH] line.
func (d *Dispatcher) announce(id, agent string, depth, max int) {
	line := fmt.Sprintf("[DISPATCH] task=%s agent=%s depth=%d/%d\n", id, agent, depth, max)
	if d.cfg.Stderr != nil {
		io.WriteString(d.cfg.Stderr, line)
	}
	d.debug(line)
}

// Stage implements call.Tracer: with a debug log, a [STAGE] line for every
// stage a call's attempt has run.
func (d *Dispatcher) Stage(id string, s call.Stage) {
	d.debug(fmt.Sprintf("[STAGE] task=%s stage=%s\n", id, s))
}

// debug appends line to the debug log, if there is one.
func (d *Dispatcher) debug(line string) {
	if d.cfg.DebugLog != "" {
		if f, err := os.OpenFile(d.cfg.DebugLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			f.WriteString(time.Now().UTC().Format(time.RFC3339Nano) + " " + line)
			f.Close()
		}
	}
}

// envMCPToken is `brood mcp --http`'s token (mcp.EnvToken): never a
// child's, whatever its definition asks, or a child could dispatch through
// the user's server outside its own limits and depth cap.
const envMCPToken = "BROOD_MCP_TOKEN"

// childEnv drops the depth stamp of this process (the child gets its own)
// and the MCP server's token.
func childEnv(base []string) []string {
	out := make([]string, 0, len(base)+2)
	for _, kv := range base {
		if strings.HasPrefix(kv, envMCPToken+"=") || strings.HasPrefix(kv, EnvDepth+"=") || strings.HasPrefix(kv, EnvMaxDepth+"=") || strings.HasPrefix(kv, EnvAskParent+"=") || strings.HasPrefix(kv, EnvHooksParent+"=") ||
			strings.HasPrefix(kv, isolate.EnvChildPolicy+"=") || isolate.MountEntry(kv) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func classOf(env *dispatch.Envelope) pool.Class {
	switch {
	case env.ReadOnly:
		return pool.ReadOnly
	case env.Isolation == "worktree":
		return pool.Isolated
	}
	return pool.Mutating
}

// priorityOf puts explore and review work first and docs last, unless the
// definition says otherwise. Lower runs sooner.
// PriorityOf is a definition's queue priority (lower runs first): its own,
// else by its name (explore and review agents first, writers of docs last).
func PriorityOf(def *registry.Definition) int { return priorityOf(def) }

func priorityOf(def *registry.Definition) int {
	if def.HasPriority {
		return def.Priority
	}
	n := strings.ToLower(def.Name)
	switch {
	case strings.Contains(n, "explore"), strings.Contains(n, "review"), strings.Contains(n, "search"):
		return 0
	case strings.Contains(n, "doc"), strings.Contains(n, "writer"):
		return 9
	}
	return 5
}

// newTaskDir is where a new child task id's directory goes: in
// .brood/dispatch at the root, nested in this dispatcher's own task
// directory in a sandboxed child (Config.TaskDir).
func (d *Dispatcher) newTaskDir(id string) (*taskdir.Dir, error) {
	if d.cfg.TaskDir != nil {
		return d.cfg.TaskDir.Child(id)
	}
	return taskdir.Open(d.cfg.ProjectRoot).Task(id)
}

// finder finds this dispatcher's tasks (dispatch.Finder).
func (d *Dispatcher) finder() dispatch.Finder {
	return dispatch.Finder{ProjectRoot: d.cfg.ProjectRoot, In: d.cfg.TaskDir}
}
