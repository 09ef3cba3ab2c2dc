package spawn

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
)

// warmAgent is the definition whose children are kept warm: the built-in
// read-only explorer, the agent a fan-out is made of. Any task whose child
// would start with the same command, environment and sandbox takes one.
const warmAgent = "explore"

// warmMaxDeaths is how many warm children in a row may die idle before the
// dispatcher stops starting them (a binary that cannot start would
// otherwise be restarted forever).
const warmMaxDeaths = 3

// warmSet is the children a root dispatcher keeps started ahead of their
// tasks (settings pool.warm). Each is a task in waiting: its id is taken
// and its directory made before it starts, so it is started exactly as a
// cold child of that id would be — argv[0] and cgroup named by the task's
// depth marker, its own session, the Landlock policy its envelope will
// have, applied from the parent's thread — and then blocks on its stdin
// until it is told to start (protocol.StartLine). A dispatch whose child
// has the same shape takes one (prepare, with the slot's id); the rest of
// the dispatch is a cold one's.
type warmSet struct {
	d *Dispatcher
	n int

	mu       sync.Mutex
	idle     []*warmSlot
	starting int
	// started is closed (and replaced) each time a start ends, or the set
	// closes: it wakes the dispatches waiting for a child being started.
	started chan struct{}
	waiting int // dispatches waiting for a child being started
	deaths  int // idle deaths in a row
	closed  bool
	starts  sync.WaitGroup
	// claimed are the slots handed to dispatches whose run has not ended:
	// Close ends those a failed dispatch never started.
	claimed map[*warmSlot]bool
}

// warmSlot is one warm child and the task directory it was started for.
type warmSlot struct {
	set     *warmSet
	id      string
	td      *taskdir.Dir
	shape   string
	w       *pool.WarmChild
	cmd     cmdLine // what it was started with (less --warm)
	claimed chan struct{}
}

// cmdLine is a command's path, arguments, directory and environment.
type cmdLine struct {
	path, dir string
	args, env []string
}

func cmdLineOf(cmd *exec.Cmd) cmdLine {
	return cmdLine{path: cmd.Path, dir: cmd.Dir, args: slices.Clone(cmd.Args), env: slices.Clone(cmd.Env)}
}

func newWarmSet(d *Dispatcher, n int) *warmSet {
	if n <= 0 {
		return nil
	}
	return &warmSet{d: d, n: n, claimed: map[*warmSlot]bool{}, started: make(chan struct{})}
}

// newDispatcher makes the Dispatcher of cfg; a root one starts its warm
// children.
func newDispatcher(cfg Config) *Dispatcher {
	ns := cfg.ns
	if ns == nil {
		ns = &nsAnswer{}
	}
	d := &Dispatcher{cfg: cfg, ns: ns}
	if cfg.Depth == 0 {
		d.warm = newWarmSet(d, cfg.Warm)
		d.warm.fill()
	}
	return d
}

// fill starts children until n are idle or starting.
func (ws *warmSet) fill() {
	if ws == nil {
		return
	}
	ws.mu.Lock()
	need := 0
	if !ws.closed && ws.deaths < warmMaxDeaths {
		need = ws.n - len(ws.idle) - ws.starting
	}
	ws.starting += max(need, 0)
	ws.starts.Add(max(need, 0))
	ws.mu.Unlock()
	for range need {
		go ws.start()
	}
}

// start starts one warm child and adds it to the idle ones.
func (ws *warmSet) start() {
	defer ws.starts.Done()
	slot, err := ws.d.startWarm(context.Background())
	ws.mu.Lock()
	ws.starting--
	ws.wake() // its waiters look again once ws.mu is released
	if err != nil {
		ws.deaths++
		ws.mu.Unlock()
		ws.d.warmNote(err)
		return
	}
	if ws.closed {
		ws.mu.Unlock()
		slot.discard()
		return
	}
	ws.idle = append(ws.idle, slot)
	ws.mu.Unlock()
	go ws.watch(slot)
}

// wake tells the dispatches waiting for a child being started that a start
// has ended (or the set closed); ws.mu is held.
func (ws *warmSet) wake() {
	close(ws.started)
	ws.started = make(chan struct{})
}

// watch replaces a child that dies while idle; it is never handed a job.
func (ws *warmSet) watch(slot *warmSlot) {
	select {
	case <-slot.claimed:
		return
	case <-slot.w.Exited():
	}
	ws.mu.Lock()
	found := ws.remove(slot)
	if found {
		ws.deaths++
	}
	ws.mu.Unlock()
	if found {
		slot.discard()
		ws.fill()
	}
}

// remove takes slot out of the idle ones; ws.mu is held.
func (ws *warmSet) remove(slot *warmSlot) bool {
	for i, s := range ws.idle {
		if s == slot {
			ws.idle = append(ws.idle[:i], ws.idle[i+1:]...)
			return true
		}
	}
	return false
}

// claim hands an idle child of the given shape to a dispatch (nil: none),
// and starts its replacement. With none idle while children are being
// started (one that died idle is being replaced, or the set is still
// filling), the dispatch waits for one rather than start cold: a child
// that is already being started is never further from its first request
// than a cold one. At most as many dispatches wait as children are being
// started; the rest start cold at once.
func (ws *warmSet) claim(ctx context.Context, shape string) *warmSlot {
	if ws == nil || shape == "" {
		return nil
	}
	ws.mu.Lock()
	slot := ws.idleOf(shape)
	if slot == nil && ws.waiting < ws.starting && !ws.closed {
		// Children being started have warmAgent's shape: only a dispatch
		// of that shape waits for one.
		ws.mu.Unlock()
		same := shape == ws.d.warmAgentShape()
		ws.mu.Lock()
		if slot = ws.idleOf(shape); slot == nil && same {
			slot = ws.await(ctx, shape)
		}
	}
	if slot != nil {
		ws.remove(slot)
		close(slot.claimed)
		ws.claimed[slot] = true
		ws.deaths = 0
	}
	stale := slot == nil && len(ws.idle) > 0
	ws.mu.Unlock()
	// Its replacement starts once the pool has nothing to run (refill):
	// started now, it would compete with the rest of this fan-out for the
	// CPU, and be of use only to the next one.
	if stale {
		// Perhaps the idle ones were started before something their
		// command depends on was set (the user's hooks attach after the
		// dispatcher is made): those no longer fit warmAgent's children.
		go ws.refresh()
	}
	return slot
}

// await waits, while children are being started and no more dispatches
// wait than starts are under way, for an idle child of the given shape
// (nil: none came); ws.mu is held.
func (ws *warmSet) await(ctx context.Context, shape string) *warmSlot {
	var slot *warmSlot
	for slot == nil && !ws.closed && ws.waiting < ws.starting && ctx.Err() == nil {
		ws.waiting++
		started := ws.started
		ws.mu.Unlock()
		select {
		case <-started:
		case <-ctx.Done():
		}
		ws.mu.Lock()
		ws.waiting--
		slot = ws.idleOf(shape)
	}
	return slot
}

// idleOf is an idle child of the given shape (nil: none); ws.mu is held.
func (ws *warmSet) idleOf(shape string) *warmSlot {
	for _, s := range ws.idle {
		if s.shape == shape && s.w.Idle() {
			return s
		}
	}
	return nil
}

// refresh discards the idle children that no longer have warmAgent's shape
// and starts new ones.
func (ws *warmSet) refresh() {
	def, ok := ws.d.cfg.Registry.Get(warmAgent)
	if !ok {
		return
	}
	want := ws.d.childCommand(ws.d.envelope("", def, call.Spec{Prompt: "(warm)"}), "", "")
	ws.mu.Lock()
	var stale []*warmSlot
	for _, s := range slices.Clone(ws.idle) {
		if !slices.Equal(s.cmd.env, want.Env) || s.cmd.path != want.Path {
			ws.remove(s)
			close(s.claimed)
			stale = append(stale, s)
		}
	}
	ws.mu.Unlock()
	for _, s := range stale {
		s.discard()
	}
	if len(stale) > 0 {
		ws.fill()
	}
}

// close discards every idle child (and those still starting) and starts no
// more.
func (ws *warmSet) close() {
	if ws == nil {
		return
	}
	ws.mu.Lock()
	ws.closed = true
	ws.wake()
	idle := ws.idle
	ws.idle = nil
	var claimed []*warmSlot
	for s := range ws.claimed {
		claimed = append(claimed, s)
	}
	ws.mu.Unlock()
	ws.starts.Wait()
	var wg sync.WaitGroup
	for _, s := range idle {
		close(s.claimed)
		wg.Go(s.discard)
	}
	for _, s := range claimed {
		wg.Go(s.w.Discard) // a taken child is its job's: left alone
	}
	wg.Wait()
}

// refill tops the set up once this dispatcher's pool runs nothing and
// nothing waits: after a fan-out, while the parent's model answers.
func (ws *warmSet) refill() {
	if ws == nil {
		return
	}
	if running, waiting := ws.d.cfg.Pool.Stats(); running == 0 && waiting == 0 {
		ws.fill()
	}
}

// idlePIDs lists the idle children's pids (tests, doctor).
func (ws *warmSet) idlePIDs() []int {
	if ws == nil {
		return nil
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []int
	for _, s := range ws.idle {
		out = append(out, s.w.PID())
	}
	return out
}

// discard ends an unclaimed slot: its child, and its directory, which holds
// nothing of a task (no envelope was ever written to it).
func (s *warmSlot) discard() {
	s.w.Discard()
	_ = os.RemoveAll(s.td.Path())
}

// child is the warm child for the pool (nil for a cold job).
func (s *warmSlot) child() *pool.WarmChild {
	if s == nil {
		return nil
	}
	return s.w
}

// release ends a claimed slot once its dispatch is over: a child that never
// took the job (the dispatch failed before its start) is killed.
func (s *warmSlot) release() {
	if s == nil {
		return
	}
	s.w.Discard()
	s.set.mu.Lock()
	delete(s.set.claimed, s)
	s.set.mu.Unlock()
}

// fits reports whether cmd, the cold command of the slot's task, is the
// one its warm child was started with: the same binary, arguments,
// directory and environment. (nil fits nothing.)
func (s *warmSlot) fits(cmd *exec.Cmd) bool {
	if s == nil {
		return false
	}
	c := cmdLineOf(cmd)
	return c.path == s.cmd.path && c.dir == s.cmd.dir && slices.Equal(c.args, s.cmd.args) && slices.Equal(c.env, s.cmd.env)
}

// startWarm starts one warm child for a new task id, in the shape of
// warmAgent's children.
func (d *Dispatcher) startWarm(ctx context.Context) (*warmSlot, error) {
	def, ok := d.cfg.Registry.Get(warmAgent)
	if !ok {
		return nil, fmt.Errorf("no %s agent to keep warm", warmAgent)
	}
	id := d.newTaskID()
	env := d.envelope(id, def, call.Spec{Prompt: "(warm)"})
	shape := warmShape(env, d.policyBase(), nil)
	if shape == "" {
		return nil, fmt.Errorf("%s children cannot start warm here (isolated)", warmAgent)
	}
	td, err := d.newTaskDir(id)
	if err != nil {
		return nil, err
	}
	if err := td.Create(); err != nil {
		return nil, err
	}
	// The directory stays empty: the child makes its tmp/ (as a cold one).
	cmd := d.childCommand(env, id, td.File(taskdir.Envelope))
	slot := &warmSlot{set: d.warm, id: id, td: td, shape: shape, cmd: cmdLineOf(cmd), claimed: make(chan struct{})}
	cmd.Args = append(cmd.Args, "--warm")
	// The .env values it redacts, as they are now (configure's, for a
	// cold child).
	if err := tool.PassSecrets(cmd, d.cfg.Redactor); err != nil {
		_ = os.RemoveAll(td.Path())
		return nil, err
	}
	// Its stderr is a pipe the pool hands to the task's stderr.log when
	// the task takes it (pool.WarmChild).
	marker := depth.Marker{Task: id, Depth: env.Depth, Max: env.MaxDepth}
	userNS, guessed := d.ns.guess()
	c := isolate.WarmConfiner{Env: env, TaskDir: td, Base: d.policyBase(), UserNS: userNS}
	if d.cfg.Mount == nil { // (a fleet worker's children mount its copy: no view of their own)
		if err := c.Prepare(ctx, cmd); err != nil {
			_ = os.RemoveAll(td.Path())
			return nil, err
		}
	}
	slot.w, err = d.cfg.Pool.Prestart(ctx, cmd, marker, c)
	if err != nil {
		_ = os.RemoveAll(td.Path())
		if !guessed || d.cfg.Mount != nil || !sandbox.StartsUserNS(cmd) {
			return nil, err
		}
		again, ferr := d.ns.failed(ctx, err)
		if ferr != nil {
			return nil, ferr // a limit (nsAnswer): nothing settled
		}
		if again {
			// Refused, and none here (nsAnswer): a warm child as the
			// probe's "no" has it (settled now: this is not asked again).
			return d.startWarm(ctx)
		}
		return nil, err
	}
	if sandbox.StartsUserNS(cmd) {
		d.ns.started()
	}
	return slot, nil
}

// warmAgentShape is the shape warmAgent's children are started in now
// ("": none can start warm).
func (d *Dispatcher) warmAgentShape() string {
	def, ok := d.cfg.Registry.Get(warmAgent)
	if !ok {
		return ""
	}
	return warmShape(d.envelope("", def, call.Spec{Prompt: "(warm)"}), d.policyBase(), nil)
}

// childCommand is the command a cold child of env starts with, as
// spawn.start builds it (its stderr and sandbox are the pool's): a warm
// child is started with it, and serves a task only if the task's own
// command is the same (warmSlot.fits).
func (d *Dispatcher) childCommand(env *dispatch.Envelope, id, envelope string) *exec.Cmd {
	exe, extraEnv := d.cfg.Exe, []string(nil)
	if d.cfg.ExeFunc != nil {
		exe, extraEnv = d.cfg.ExeFunc(env)
	}
	cmd := exec.Command(exe, append(slices.Clone(d.cfg.Args), "--mode", "json", "--task-id", id, "--envelope", envelope)...)
	cmd.Dir = env.Workspace
	// No secret-looking variable reaches a child unless its definition asks for it by name.
	cmd.Env = append(append(tool.ChildEnviron(childEnv(d.cfg.Env), env.Env), extraEnv...), EnvDepth+"="+strconv.Itoa(env.Depth), EnvMaxDepth+"="+strconv.Itoa(env.MaxDepth))
	if d.cfg.Ask != nil {
		cmd.Env = append(cmd.Env, EnvAskParent+"=1")
	}
	if e := d.hookEnv(); e != "" {
		cmd.Env = append(cmd.Env, e)
	}
	return cmd
}

// warmShape is what of env a warm child's start depends on: the sandbox
// policy (with the task's own directories in place of their paths), the
// working directory, the definition's environment, the limits and the
// depth. "" means env's child always starts cold: an isolated child or an
// in-place writer (its copy or view, namespaces and mounts are made for
// it), a fork or a resume. (The task's command itself is compared
// at its start: warmSlot.fits.)
func warmShape(env *dispatch.Envelope, base *isolate.PolicyBase, x *isolate.Expansion) string {
	shape, _ := warmShapeRD(env, base, x)
	return shape
}

// warmShapeRD is warmShape with what the kernel holds of env's Read deny
// rules for such a child (isolate.ConfineChildRD's).
func warmShapeRD(env *dispatch.Envelope, base *isolate.PolicyBase, x *isolate.Expansion) (string, isolate.ReadDeny) {
	if env.Isolation != "" || isolate.InPlaceWriter(env) || env.Fork || env.ResumeCount > 0 {
		return "", isolate.ReadDeny{Held: true}
	}
	// (What became of its Read deny rules too: hidden, or its Bash
	// checked per command.)
	pol, needed, rd := x.ChildPolicyReads(env, "\x00task", base)
	return fmt.Sprintf("%+v\x00%v\x00%v\x00%q\x00%q\x00%d/%d\x00%+v\x00%v %q", pol, needed, env.NoLandlock, env.Workspace, env.Env, env.Depth, env.MaxDepth, env.Limits, rd.Held, rd.Why), rd
}

// takeWarm gives a prepared dispatch an idle warm child of its shape: the
// task takes the slot's id and directory. Called by prepare before the
// task's records are written.
func (d *Dispatcher) takeWarm(ctx context.Context, env *dispatch.Envelope, req call.Spec, x *isolate.Expansion) *warmSlot {
	if d.warm == nil || req.TaskID != "" || req.Fork {
		return nil
	}
	shape, rd := warmShapeRD(env, d.policyBase(), x)
	slot := d.warm.claim(ctx, shape)
	if slot != nil && !slot.untouched() {
		// Something else wrote in its directory while it waited (an
		// in-place writer can reach .brood/dispatch): the task starts
		// cold, in the fresh directory made for it.
		slot.release()
		_ = os.RemoveAll(slot.td.Path())
		return nil
	}
	if note := rd.ParentNote(env); slot != nil && note != "" {
		// As spawnConfiner.Confine says it for a child started cold.
		env.Notes = append(env.Notes, note)
	}
	return slot
}

// untouched reports whether the slot's directory still holds only what the
// parent made in it (nothing), or the empty tmp/ the child itself made.
func (s *warmSlot) untouched() bool {
	ents, err := os.ReadDir(s.td.Path())
	if err == nil && len(ents) == 0 {
		return true
	}
	if err != nil || len(ents) != 1 || ents[0].Name() != taskdir.Tmp {
		return false
	}
	tmp, err := os.Lstat(s.td.File(taskdir.Tmp))
	if err != nil || !tmp.IsDir() {
		return false
	}
	inside, err := os.ReadDir(s.td.File(taskdir.Tmp))
	return err == nil && len(inside) == 0
}

// warmFor is slot if cmd, its task's cold command, is the one its warm
// child was started with; otherwise the slot's child is discarded (the task
// starts cold, under the same id) and the idle ones are checked for the
// same mismatch.
func (d *Dispatcher) warmFor(slot *warmSlot, cmd *exec.Cmd) *warmSlot {
	if slot == nil || slot.fits(cmd) {
		return slot
	}
	slot.release()
	go d.warm.refresh()
	return nil
}

// warmNote says once on stderr why a warm child could not start.
func (d *Dispatcher) warmNote(err error) {
	if d.cfg.Stderr != nil {
		d.warmNoteOnce.Do(func() { fmt.Fprintf(d.cfg.Stderr, "brood: pool.warm: %v (children start cold)\n", err) })
	}
}

// Close ends the dispatcher's warm children (pool.warm) that no task took
// and waits for the warm-up of its children's layer at work (layerWarm).
// Running children are not touched. A session calls it when it ends; it is
// safe to call more than once.
func (d *Dispatcher) Close() {
	d.warm.close()
	d.layer.close()
}

// WarmIdle lists the pids of the warm children waiting for a task.
func (d *Dispatcher) WarmIdle() []int { return d.warm.idlePIDs() }
