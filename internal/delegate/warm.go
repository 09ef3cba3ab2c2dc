package delegate

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/taskdir"
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
	deaths   int // idle deaths in a row
	closed   bool
	starts   sync.WaitGroup
}

// warmSlot is one warm child and the task directory it was started for.
type warmSlot struct {
	id      string
	td      *taskdir.Dir
	shape   string
	w       *pool.WarmChild
	stderr  *os.File
	claimed chan struct{}
}

func newWarmSet(d *Dispatcher, n int) *warmSet {
	if n <= 0 {
		return nil
	}
	return &warmSet{d: d, n: n}
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
// and starts its replacement.
func (ws *warmSet) claim(shape string) *warmSlot {
	if ws == nil || shape == "" {
		return nil
	}
	ws.mu.Lock()
	var slot *warmSlot
	for _, s := range ws.idle {
		if s.shape == shape && s.w.Idle() {
			slot = s
			break
		}
	}
	if slot != nil {
		ws.remove(slot)
		close(slot.claimed)
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

// refresh discards the idle children that no longer have warmAgent's shape
// and starts new ones.
func (ws *warmSet) refresh() {
	def, ok := ws.d.cfg.Registry.Get(warmAgent)
	if !ok {
		return
	}
	want := ws.d.warmShape(ws.d.envelope("", def, Request{Prompt: "(warm)"}))
	ws.mu.Lock()
	var stale []*warmSlot
	for _, s := range slices.Clone(ws.idle) {
		if s.shape != want {
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
	idle := ws.idle
	ws.idle = nil
	ws.mu.Unlock()
	ws.starts.Wait()
	var wg sync.WaitGroup
	for _, s := range idle {
		close(s.claimed)
		wg.Go(s.discard)
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
	s.stderr.Close()
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
	s.stderr.Close()
}

// startWarm starts one warm child for a new task id, in the shape of
// warmAgent's children.
func (d *Dispatcher) startWarm(ctx context.Context) (*warmSlot, error) {
	def, ok := d.cfg.Registry.Get(warmAgent)
	if !ok {
		return nil, fmt.Errorf("no %s agent to keep warm", warmAgent)
	}
	id := dispatch.NewID()
	env := d.envelope(id, def, Request{Prompt: "(warm)"})
	shape := d.warmShape(env)
	if shape == "" {
		return nil, fmt.Errorf("%s children cannot start warm here (isolated, or without network)", warmAgent)
	}
	td, err := taskdir.Open(d.cfg.ProjectRoot).Task(id)
	if err != nil {
		return nil, err
	}
	if err := td.Create(); err != nil {
		return nil, err
	}
	slot := &warmSlot{id: id, td: td, shape: shape, claimed: make(chan struct{})}
	fail := func(err error) (*warmSlot, error) {
		if slot.stderr != nil {
			slot.stderr.Close()
		}
		_ = os.RemoveAll(td.Path())
		return nil, err
	}
	if _, err := td.FreshDir(taskdir.Tmp, 0o700); err != nil {
		return fail(err)
	}
	if slot.stderr, err = td.CreateFresh(taskdir.Stderr); err != nil {
		return fail(err)
	}
	cmd := d.childCommand(env, id, td.File(taskdir.Envelope))
	cmd.Args = append(cmd.Args, "--warm")
	cmd.Stderr = slot.stderr
	marker := depth.Marker{Task: id, Depth: env.Depth, Max: env.MaxDepth}
	slot.w, err = d.cfg.Pool.Prestart(ctx, cmd, marker, func() error { return sandboxFromParent(cmd, env, td, nil) })
	if err != nil {
		return fail(err)
	}
	return slot, nil
}

// warmShape is what a child of env starts with that a warm child must
// share to serve it: the command and its environment, the working
// directory and the sandbox policy (with the task's own directories in
// place of their paths). "" means env's child always starts cold: an
// isolated child (its copy, namespaces and mounts are made for it), one
// without network (a namespace of its own), a fork or a resume.
func (d *Dispatcher) warmShape(env *dispatch.Envelope) string {
	if env.Isolation != "" || (env.Network != nil && !*env.Network) || env.Fork || env.ResumeCount > 0 {
		return ""
	}
	cmd := d.childCommand(env, "", "")
	pol, needed := childPolicy(env, "\x00task", "\x00tmp")
	var b strings.Builder
	fmt.Fprintf(&b, "%q\x00%q\x00%q\x00%+v\x00%v\x00%v", cmd.Path, cmd.Args, cmd.Dir, pol, needed, env.NoLandlock)
	for _, e := range cmd.Env {
		b.WriteString("\x00" + e)
	}
	return b.String()
}

// takeWarm gives a prepared dispatch an idle warm child of its shape: the
// task takes the slot's id and directory. Called by prepare before the
// task's records are written.
func (d *Dispatcher) takeWarm(env *dispatch.Envelope, req Request) *warmSlot {
	if d.warm == nil || req.TaskID != "" || req.Fork {
		return nil
	}
	slot := d.warm.claim(d.warmShape(env))
	if slot != nil && !slot.untouched() {
		// Something else wrote in its directory while it waited (an
		// in-place writer can reach .brood/dispatch): the task starts
		// cold, in a directory of its own made now.
		slot.discard()
		return nil
	}
	return slot
}

// untouched reports whether the slot's directory still holds only what the
// parent made in it: an empty tmp/ and the stderr.log it holds open.
func (s *warmSlot) untouched() bool {
	ents, err := os.ReadDir(s.td.Path())
	if err != nil || len(ents) != 2 {
		return false
	}
	tmp, err := os.Lstat(s.td.File(taskdir.Tmp))
	if err != nil || !tmp.IsDir() {
		return false
	}
	if inside, err := os.ReadDir(s.td.File(taskdir.Tmp)); err != nil || len(inside) > 0 {
		return false
	}
	onDisk, err1 := os.Lstat(s.td.File(taskdir.Stderr))
	held, err2 := s.stderr.Stat()
	return err1 == nil && err2 == nil && os.SameFile(onDisk, held)
}

// warmNote says once on stderr why a warm child could not start.
func (d *Dispatcher) warmNote(err error) {
	if d.cfg.Stderr != nil {
		d.warmNoteOnce.Do(func() { fmt.Fprintf(d.cfg.Stderr, "brood: pool.warm: %v (children start cold)\n", err) })
	}
}

// Close ends the dispatcher's warm children (pool.warm) that no task took.
// Running children are not touched. A session calls it when it ends; it is
// safe to call more than once.
func (d *Dispatcher) Close() { d.warm.close() }

// WarmIdle lists the pids of the warm children waiting for a task.
func (d *Dispatcher) WarmIdle() []int { return d.warm.idlePIDs() }
