package call

import (
	"context"
	"errors"
)

// Stage is one step of a call, in the order the pipeline runs them.
type Stage string

// The stages of one attempt of a call.
const (
	// StageAcquire checks the attempt may run (the depth cap, the
	// delegation scope, the agent's definition; a resume's owner record
	// and state) and takes its task.
	StageAcquire Stage = "acquire"
	// StagePrepare writes the task's records (owner record, envelope,
	// dispatch log), each once.
	StagePrepare Stage = "prepare"
	// StageIsolate sets up how the child is held: its sandbox and, for an
	// isolated writer, the copy of the tree it gets (taken once it holds
	// its pool slot, so it is the tree as it was at its start).
	StageIsolate Stage = "isolate"
	// StageExec runs the child through the process pool to its end.
	StageExec Stage = "exec"
	// StageJudge verifies the child's records and decides the result.
	StageJudge Stage = "judge"
	// StageLand brings an isolated child's change back (or keeps its copy).
	StageLand Stage = "land"
	// StageRecord writes the parent's verdict and renders the result.
	StageRecord Stage = "record"
)

// Stages lists every stage in order.
func Stages() []Stage {
	return []Stage{StageAcquire, StagePrepare, StageIsolate, StageExec, StageJudge, StageLand, StageRecord}
}

// Local runs attempts of calls on this machine (delegate's Dispatcher).
type Local interface {
	// Acquire begins one attempt of s: a refusal is an error, and nothing
	// is written for it.
	Acquire(ctx context.Context, s Spec) (Attempt, error)
	// Recorded looks at an interrupted call's task (Spec.Continue): a task
	// that finished is its verified result (it never runs twice); started
	// reports whether it got as far as its records.
	Recorded(ctx context.Context, id string) (r *Result, started bool, err error)
}

// Tracer is a Local that is told of every stage an attempt has run, in
// order, once its task id is known (acquire and prepare together, after
// prepare): the Dispatcher's debug log.
type Tracer interface {
	Stage(taskID string, s Stage)
}

// Attempt is one run of a call's task after StageAcquire. Run calls each of
// its stages once, in order, then Release, whatever happened.
type Attempt interface {
	// TaskID is the attempt's task.
	TaskID() string
	// Agent is its agent type.
	Agent() string
	// Prepare writes its records; an error is a refusal (no child ran).
	Prepare(ctx context.Context) error
	Isolate(ctx context.Context)
	// Exec runs the child; every ending, a start that failed included, is
	// judged, never an error.
	Exec(ctx context.Context)
	Judge(ctx context.Context)
	Land(ctx context.Context)
	Record(ctx context.Context) *Result
	// Release gives back what the attempt holds (its task's lock).
	Release()
}

// prepared is an attempt that has been acquired and prepared: what is left
// of it runs now or in the background.
type prepared struct {
	a      Attempt
	l      Local
	stages []Stage
}

// ran notes that p's attempt has run stage s.
func (p *prepared) ran(s Stage) {
	p.stages = append(p.stages, s)
	if t, ok := p.l.(Tracer); ok {
		t.Stage(p.a.TaskID(), s)
	}
}

// begin runs StageAcquire and StagePrepare of one attempt.
func begin(ctx context.Context, l Local, s Spec) (*prepared, error) {
	a, err := l.Acquire(ctx, s)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, errors.New("call: no attempt acquired")
	}
	if err := a.Prepare(ctx); err != nil {
		a.Release()
		return nil, err
	}
	p := &prepared{a: a, l: l}
	p.ran(StageAcquire)
	p.ran(StagePrepare)
	return p, nil
}

// finish runs the rest of a prepared attempt's stages.
func (p *prepared) finish(ctx context.Context) *Result {
	a := p.a
	defer a.Release()
	a.Isolate(ctx)
	p.ran(StageIsolate)
	a.Exec(ctx)
	p.ran(StageExec)
	a.Judge(ctx)
	p.ran(StageJudge)
	a.Land(ctx)
	p.ran(StageLand)
	r := a.Record(ctx)
	p.ran(StageRecord)
	r.Stages = p.stages
	return r
}

// attempt runs one whole attempt: a new task or (s.Resume) a continuation.
func attempt(ctx context.Context, l Local, s Spec) (*Result, error) {
	p, err := begin(ctx, l, s)
	if err != nil {
		return nil, err
	}
	return p.finish(ctx), nil
}

// continued resolves Spec.Continue: a finished task's recorded result, or
// the spec to run (a stopped task resumed with ContinuePrompt, one that
// never started started under its id).
func continued(ctx context.Context, l Local, s Spec) (*Result, Spec, error) {
	if s.Resume == "" || !s.Continue {
		return nil, s, nil
	}
	r, started, err := l.Recorded(ctx, s.Resume)
	if err != nil || r != nil {
		return r, s, err
	}
	if !started {
		s.TaskID, s.Resume = s.Resume, "" // Prompt is the brief
	} else {
		s.Prompt = ContinuePrompt
	}
	return nil, s, nil
}

// Do runs a call to its verified end through every stage: the one path of
// the Task tool, `brood subagent`, a resume and a workflow call. With a
// schema, an answer that does not validate is sent back to the same task
// (resumed) up to s.Retries times; c compiles it (nil: a call with one is
// refused, ErrNoCompiler).
func Do(ctx context.Context, l Local, c Compiler, s Spec) (*Result, error) {
	loop, err := newLoop(c, s)
	if err != nil {
		return nil, err
	}
	r, s, err := continued(ctx, l, loop.first())
	if err != nil || r != nil {
		if r != nil {
			r.Attempts = 1
		}
		return r, err
	}
	p, err := begin(ctx, l, s)
	if err != nil {
		return nil, err
	}
	r, err = loop.run(ctx, l, s, p)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Handle is a call running in the background: the same pipeline as Do,
// schema retries and lowered limits included.
type Handle struct {
	id    string
	agent string
	done  chan struct{}
	res   *Result
}

// TaskID is the task of the call's first attempt (the one later attempts
// resume).
func (h *Handle) TaskID() string { return h.id }

// Agent is the call's agent type.
func (h *Handle) Agent() string { return h.agent }

// Done is closed once the call has ended.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Result is the call's result once Done is closed (nil before).
func (h *Handle) Result() *Result {
	select {
	case <-h.done:
		return h.res
	default:
		return nil
	}
}

// Go starts a call in the background: its first attempt is acquired and
// prepared here (a refusal is an error, and the task id is known at once),
// the rest runs under life, which bounds it instead of the caller's ctx.
// A background call never continues an interrupted one (Spec.Continue).
func Go(ctx, life context.Context, l Local, c Compiler, s Spec) (*Handle, error) {
	if s.Continue {
		return nil, errors.New("call: a background call cannot continue an interrupted one")
	}
	loop, err := newLoop(c, s)
	if err != nil {
		return nil, err
	}
	s = loop.first()
	p, err := begin(ctx, l, s)
	if err != nil {
		return nil, err
	}
	h := &Handle{id: p.a.TaskID(), agent: p.a.Agent(), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		// A retry that could not start leaves the last result, its
		// failure saying so: there is no caller to hand an error to.
		h.res, _ = loop.run(life, l, s, p)
	}()
	return h, nil
}
