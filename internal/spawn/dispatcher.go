// Package delegate is delegation as the model sees it — the Task, TaskOutput
// and SendMessage tools — and both ends of the child protocol: the parent's
// Dispatcher (envelope, depth cap, pool, verification, untrusted wrapping)
// and RunChild, which a child brood process runs. It imports the agent loop's
// interfaces; the agent loop never imports it.
package spawn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/taskdir"
)

// Dispatcher spawns and tracks the children of one process.
type Dispatcher struct {
	cfg Config

	// denyWalks counts the expansions of Read deny rules its spawns made
	// (isolate.Expansion.Walks): one per tree a child is matched in.
	denyWalks atomic.Int64

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

	// parentW are the in-place children's windows this run's own hooks'
	// writes are recorded in (parentwrites.go).
	parentW parentWrites

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
