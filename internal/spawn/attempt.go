package spawn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/trust"
)

// attempt is one run of a call's task on this machine: the Dispatcher's
// call.Attempt. The pipeline in package call runs its stages in order,
// each once; their state is kept here between them.
type attempt struct {
	d    *Dispatcher
	spec call.Spec
	// Acquired: a new task's definition, or the resumed task.
	def *registry.Definition
	rs  *resumption
	// Prepared.
	j *job
	// From Isolate on.
	ctx     context.Context // the call's, for the stop event and its span
	emit    func(Event)
	s       *spawn
	endAsks context.CancelFunc
	unheld  []string
	// venvs are the workspace's venv activate scripts as they were before
	// the child ran (trust.UnderminedBy exempts only these, unchanged).
	venvs trust.VenvPins
	// Exec.
	o       *dispatch.Output
	execErr error
	// Judge.
	res  *dispatch.Result
	v    dispatch.Verdict
	want dispatch.Expect
	// Land.
	isoMsg, patch, hunks string
	failures, concerns   []string
	undo                 []func() // run by Release, last first
}

var _ call.Local = (*Dispatcher)(nil)

// Acquire implements call.Local: it checks that s may run here (a resume:
// that its task may be resumed) and writes nothing.
func (d *Dispatcher) Acquire(ctx context.Context, s call.Spec) (call.Attempt, error) {
	a := &attempt{d: d, spec: s}
	if s.Resume != "" {
		rs, err := d.acquireResume(s.Resume, s.Prompt)
		if err != nil {
			return nil, err
		}
		a.rs = rs
		return a, nil
	}
	def, err := d.definition(s)
	if err != nil {
		return nil, err
	}
	a.def = def
	return a, nil
}

// Recorded implements call.Local.
func (d *Dispatcher) Recorded(ctx context.Context, id string) (*call.Result, bool, error) {
	return d.recorded(ctx, id)
}

func (a *attempt) TaskID() string {
	switch {
	case a.j != nil:
		return a.j.env.TaskID
	case a.rs != nil:
		return a.rs.own.TaskID
	}
	return a.spec.TaskID
}

// Agent is the attempt's agent type.
func (a *attempt) Agent() string {
	switch {
	case a.j != nil:
		return a.j.name
	case a.rs != nil:
		return a.rs.own.Agent
	case a.def != nil:
		return a.def.Name
	}
	return a.spec.Agent
}

// Prepare writes the task's records once: its limits lowered to the
// call's, its trace context, whether it waits at turn boundaries and a
// continued conversation's prompt all in the envelope's one write.
func (a *attempt) Prepare(ctx context.Context) error {
	d, s := a.d, a.spec
	tp := telemetry.TraceParent(ctx)
	var j *job
	var err error
	if a.rs != nil {
		j, err = d.prepareResumed(a.rs, s.Limits, tp, s.Watch.Turn != nil)
	} else {
		j, err = d.prepareNew(ctx, s, a.def, s.Limits, tp)
	}
	if err != nil {
		return err
	}
	a.j = j
	spawntrace.Mark(ctx, "records")
	// Released last: the bench's trace, never the run's (an error is ignored).
	a.undo = append(a.undo, func() { spawntrace.WriteWith(ctx, spawntrace.ParentFile, j.td.WriteFile) })
	a.undo = append(a.undo, j.unlock, d.warm.refill, j.warm.release)
	return nil
}

// Isolate announces the dispatch and sets up how its child is held: the
// spawn whose Confiner makes its copy and sandbox once it holds its pool
// slot, and the configuration guard of an in-place writer.
func (a *attempt) Isolate(ctx context.Context) {
	d, j := a.d, a.j
	env, name, id := j.env, j.name, j.env.TaskID
	a.ctx, a.emit = ctx, d.emitter(a.spec.Watch.Events)
	a.emit(Event{Type: protocol.EvDispatchStart, TaskID: id, Agent: name, Depth: env.Depth, MaxDepth: env.MaxDepth, Parent: d.cfg.ParentTaskID, Description: j.desc, ToolUseID: j.callID})
	d.announce(id, name, env.Depth, env.MaxDepth)
	if def, ok := d.cfg.Registry.Get(name); ok && len(def.Lacking) > 0 && d.cfg.Stderr != nil {
		fmt.Fprintf(d.cfg.Stderr, "brood: %s runs without %s: its definition names them and brood does not provide them\n", name, strings.Join(def.Lacking, ", "))
	}
	// Exactly one stop event per start, whatever happens after.
	a.undo = append(a.undo, a.stopped)
	askCtx, endAsks := context.WithCancel(ctx)
	a.endAsks = endAsks
	a.undo = append(a.undo, endAsks)
	a.s = &spawn{d: d, j: j, emit: a.emit, alive: a.spec.Watch.Alive, turn: a.spec.Watch.Turn, final: a.spec.Watch.Final, askCtx: askCtx, cfg: d.newConfigGuard(id)}
	a.undo = append(a.undo, a.s.cfg.release)
	a.unheld = d.unheldGitConfig(env)
	a.venvs = pinVenvs(ctx, env.Workspace)
}

// Exec runs the child through the pool (again on a git worktree copy when
// its overlay could not be mounted).
func (a *attempt) Exec(ctx context.Context) {
	d, j, s := a.d, a.j, a.s
	a.o, a.execErr = s.start(ctx)
	d.denyWalks.Add(int64(j.deny.Walks())) // (its every use is made by its start)
	// The child's TMPDIR is its own scratch space, kept for no one: it goes
	// when the run is settled (after its leftovers are killed and its
	// result read), so what a child wrote there does not outlive it. A
	// resume makes a fresh one.
	a.undo = append(a.undo, func() { d.removeTmp(j.td) })
	d.removeUnheld(j.env, a.unheld)
	if s.overlayMountFailed(a.o) {
		a.o, a.execErr = s.retryOnWorktree(ctx, a.o)
	}
	a.endAsks() // a question still open is void: its asker is gone
	if ws := s.ws; ws != nil {
		a.undo = append(a.undo, func() { ws.Cleanup(context.WithoutCancel(ctx)) })
	}
}

// Judge decides how the run ended: the result the parent model sees and
// the verdict recorded.
func (a *attempt) Judge(ctx context.Context) {
	d, j := a.d, a.j
	if a.o == nil {
		// The log is written once per run: at the start, with the pid (how
		// the run ended is output.json's and the verdict's), or here, for a
		// run that never started.
		j.lg.Finished = time.Now().UTC()
		d.writeLog(j.td, j.lg)
		status := dispatch.StatusFailed
		if ctx.Err() != nil {
			status = dispatch.StatusCancelled
		}
		a.res = d.recover(j, status, "never started: "+errText(a.execErr), true)
		a.v = verdictOf(j, a.res, nil, "")
		return
	}
	// (An error with an outcome is only a failed output.json write: the
	// child ran, and its result is judged as usual.)
	killLeftovers(j.td, a.o.PID)
	a.res, a.v, a.want = d.judge(ctx, j, a.s, a.o)
}

// Land brings an isolated child's change back, settles what an in-place
// writer did to the configuration, and applies the edge guardrails.
func (a *attempt) Land(ctx context.Context) {
	if a.o == nil {
		return // it never started: nothing to land
	}
	d, j, s, res := a.d, a.j, a.s, a.res
	if s.ws != nil {
		a.isoMsg, a.patch, a.hunks = d.land(ctx, s.ws, j.td, res)
		res.Isolation = a.isoMsg
		a.v.Patch = a.patch // a later reading of the task says not-applied
		if a.patch == call.PatchPartlyApplied {
			a.v.Status, a.v.Error, a.v.Accepted = res.Status, res.Error, false
		}
	}
	res.Config = s.cfg.settle(s.ws)
	if (s.ws == nil || s.ws.Mode == isolate.ModeNone) && (a.want.Observed || s.links != nil) && !j.env.ReadOnly {
		res.Config = append(res.Config, d.settleLinks(j, res, &a.v, a.want, s.links, s.cfg)...)
	}
	a.v.Config = res.Config
	if a.want.Observed || s.ws != nil {
		// The parent's own account of what changed (its walks, or the
		// patch), which result.json may not hold: said again when the
		// task is read later, accepted or not (a rejected in-place
		// writer's changes are in the tree all the same).
		a.v.FilesChanged = nonNil(res.FilesChanged)
	}
	a.v.Refs = a.want.Refs
	a.failures = a.v.Reasons
	var run *callLog
	if s.prog != nil {
		run = s.prog.calls
	}
	venvs := a.venvs
	if s.ws != nil && s.ws.Mode != isolate.ModeNone {
		venvs = nil // its copy's activate is not the one pinned
	}
	calls, known := d.recordCalls(j, run)
	a.concerns = d.guardrails(j, res, &a.v, a.want, calls, known, venvs)
	d.mu.Lock()
	d.childUsage = d.childUsage.Add(res.Usage).Add(res.ChildUsage)
	d.mu.Unlock()
}

// Record writes the parent's verdict and renders the result.
func (a *attempt) Record(ctx context.Context) *call.Result {
	text := a.d.record(a.j, a.res, a.o, a.v, a.isoMsg, a.concerns, a.patch, a.hunks)
	return resultOf(a.j.env.TaskID, a.res, a.o, text, a.failures, a.patch)
}

// Release undoes what the stages hold, last first: the copy, the TMPDIR,
// the configuration guard, the stop event, the warm slot, the task's lock.
func (a *attempt) Release() {
	if a.s != nil {
		a.s.closeWindow()
	}
	for i := len(a.undo) - 1; i >= 0; i-- {
		a.undo[i]()
	}
	a.undo = nil
}

// stopped emits the dispatch's one stop event and marks its span.
func (a *attempt) stopped() {
	d, env, name, id := a.d, a.j.env, a.j.name, a.j.env.TaskID
	ev := Event{Type: protocol.EvDispatchStop, TaskID: id, Agent: name, Depth: env.Depth, Status: dispatch.StatusFailed, Parent: d.cfg.ParentTaskID}
	if res := a.res; res != nil {
		ev.Status, ev.Text = res.Status, dispatch.StoppedWords(res.Error)
		ev.Usage = res.Usage.Add(res.ChildUsage)
	}
	if a.o != nil {
		ev.WallMS = a.o.WallMS
		ev.KilledBy = killedBy(a.o)
	}
	a.emit(ev)
	u := ev.Usage
	telemetry.MarkChild(a.ctx, telemetry.Child{TaskID: id, Agent: name, Status: ev.Status, KilledBy: ev.KilledBy, Depth: env.Depth,
		Usage: telemetry.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}})
}
