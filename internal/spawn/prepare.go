// A new dispatch prepared: its task directory, envelope, owner record and
// log, before any process.

package spawn

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/taskdir"
)

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
	// deny is its Read deny rules' expansion, made once for its spawn's
	// every use (a warm child's shape, its view or copy, its policy).
	deny *isolate.Expansion
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
func (d *Dispatcher) prepareNew(ctx context.Context, req call.Spec, def *registry.Definition, lim call.Limits, tp string) (_ *job, err error) {
	// The pool's one-time containment probe runs while the records are
	// written, not after them in the first child's spawn.
	d.cfg.Pool.Warm()
	id, td, err := d.createTaskDir(req)
	if err != nil {
		return nil, err
	}
	dir := td.Path()
	env := d.envelope(id, def, req)
	if req.Background {
		env.Background = true
	}
	env.TraceParent = tp
	lowerLimits(env, lim)
	inPlace := d.chooseIsolation(env, def, req)
	if inPlace {
		// Counted in place until the job's unlock; a failure before the
		// job exists gives the turn back, or every later auto writer of
		// this dispatcher would be sent to a copy for a writer that is not.
		defer func() {
			if err != nil {
				d.leaveInPlace()
			}
		}()
	}
	d.checkIsolation(env)
	holdBashReadOnly(env)
	// The Read deny rules' expansion, once for the spawn's every use.
	deny := isolate.NewExpansion()
	if d.cfg.Depth == 0 && d.cfg.Mount == nil {
		// The layer its children's domain stacks (isolate.KnownLayer),
		// built once per dispatcher: beside the records, not on the
		// thread the first child starts from. (A copy: the spawn goes
		// on filling the envelope. Its shared paths do not depend on
		// the task directory, which a warm child's may replace.)
		e := *env
		d.layer.warm(func() { d.policyBase().WarmLayer(&e, dir, deny) })
	}
	// A warm child of this shape, started for a task id of its own, makes
	// this dispatch that task (warm.go): its id and directory replace the
	// fresh ones.
	warm := d.takeWarm(ctx, env, req, deny)
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
	durable, err := d.writeNewRecords(env, def, req, td)
	if err != nil {
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
	j := &job{name: def.Name, prio: priorityOf(def), env: env, dir: dir, td: td, lg: lg, unlock: unlock, warm: warm, desc: req.Description, callID: req.CallID, owner: durable, deny: deny}
	if inPlace && env.Isolation == "" {
		j.inPlace = true
		j.unlock = func() { d.leaveInPlace(); unlock() }
	} else if inPlace {
		d.leaveInPlace()
	}
	return j, nil
}

// createTaskDir names a new dispatch (req.TaskID, or a new id) and makes
// its task directory, refusing an id a child reported below itself and
// one whose task exists already.
func (d *Dispatcher) createTaskDir(req call.Spec) (string, *taskdir.Dir, error) {
	id := req.TaskID
	if id == "" {
		id = d.newTaskID()
	} else if !d.claim(id, id) {
		return "", nil, fmt.Errorf("task %s is one a child reported below itself; use another task id", id)
	}
	td, err := d.newTaskDir(id)
	if err != nil {
		return "", nil, err
	}
	if td.Has(taskdir.Envelope) {
		return "", nil, fmt.Errorf("task %s exists already; resume it instead", id)
	}
	if err := td.Create(); err != nil {
		return "", nil, fmt.Errorf("create %s: %w", td.Path(), err)
	}
	return id, td, nil
}

// writeNewRecords writes a new dispatch's owner record and its envelope,
// and returns the owner record on its way to disk.
func (d *Dispatcher) writeNewRecords(env *dispatch.Envelope, def *registry.Definition, req call.Spec, td *taskdir.Dir) (*taskdir.Durable, error) {
	own := ownerOf(env, def, req)
	own.Session, own.Version = cmp.Or(req.Session, d.cfg.Session), dispatch.OwnerVersion
	// What is recorded on disk carries no secret the model put in the call
	// (secrets.md): the owner record's texts, and the envelope's (its
	// description, prompt, brief, context and system text). The child
	// works from the markers, as its transcript would show them; a brief
	// never needs a secret's value (the child asks for a variable by name),
	// and a resume rebuilds it from the record, markers and all.
	if redact := d.cfg.Redact; redact != nil {
		own.Description, own.Brief, own.Context, own.System = redact(own.Description), redact(own.Brief), redact(own.Context), redact(own.System)
		env.HandoffReason, env.Prompt, env.Brief = redact(env.HandoffReason), redact(env.Prompt), redact(env.Brief)
		env.Context, env.System = redact(env.Context), redact(env.System)
	}
	// In place at once (every process reads it; a crash of brood loses
	// nothing), on disk in the background: record waits for that before it
	// writes the verdict, so a power cut loses an owner record only while
	// no verdict says the task ran (docs/performance.md, "spawn path").
	if err := dispatch.SealOwner(*d.cfg.Owners, &own); err != nil {
		return nil, err
	}
	durable, err := d.cfg.Owners.WriteOwnerDurable(own.TaskID, own)
	if err != nil {
		return nil, err
	}
	// Not synced: the owner record is what a resume rebuilds the envelope
	// from and what a listing trusts; an envelope a power cut left empty is
	// listed as unreadable, never believed.
	if err := td.WriteJSON(taskdir.Envelope, env, false); err != nil {
		return nil, err
	}
	return durable, nil
}

// ownerOf is the parent's own record of a new dispatch: what a resume and
// a listing trust, since the child may rewrite its envelope.
func ownerOf(env *dispatch.Envelope, def *registry.Definition, req call.Spec) dispatch.Owner {
	o := dispatch.Owner{
		TaskID: env.TaskID, Agent: def.Name, Fork: req.Fork, Isolation: req.Isolation, Description: req.Description, Brief: req.Prompt, Context: req.Context,
		Model: env.Model, Effort: env.Effort, ParentTaskID: env.ParentTaskID, SourceAgent: env.SourceAgent,
		Depth: env.Depth, Workspace: env.Workspace, Created: env.Created, Asker: req.Parent,
		Submitter: req.Submitter, CallID: req.CallID,
	}
	if env.Fork {
		o.HistoryPolicy = env.HistoryPolicy
		if env.HistoryPolicy == policyForkVerbatim {
			o.System = env.System
		}
	}
	return o
}
