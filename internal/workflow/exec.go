package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/textline"
)

// Journal is where a run records its calls as they start and finish, so
// that an interrupted run continues without running a finished call again.
type Journal interface {
	// Lookup returns what is recorded for a call.
	Lookup(key string) (Entry, bool)
	// Started records that key's call starts as task id (before it does).
	Started(key, taskID string) error
	// Finished records a call's end.
	Finished(key string, rec CallRecord) error
	// Count is how many calls the journal has seen start.
	Count() int
	// Spent is the usage of every call it saw finish (each call's last
	// record: a task's usage counts all of its runs), so that max_tokens
	// and the totals hold across resumes.
	Spent() model.Usage
}

// Entry is a journal's knowledge of one call.
type Entry struct {
	TaskID string
	Done   *CallRecord
}

// Options are what an engine gives the executor.
type Options struct {
	RunID   string
	Runner  call.Runner
	Journal Journal
	// Inputs are the resolved inputs (ResolveInputs).
	Inputs map[string]any
	// Concurrency bounds the calls running at once (0: unbounded here;
	// the runner's pool still bounds them).
	Concurrency int
	// NewTaskID names a new call's task before it starts.
	NewTaskID func() string
	// Events receives progress (may be nil); it must not block for long.
	Events func(Event)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Runtime runs the calls side by side (default: goroutines).
	Runtime Runtime
}

// executor is one run of a plan.
type executor struct {
	p   *Plan
	o   Options
	rt  Runtime
	sem Semaphore

	mu      sync.Mutex
	agents  int
	usage   model.Usage
	stopped string // why no new agent starts (max_agents, max_tokens)
	notes   []string
	outputs map[string]any
	counts  map[string]*Counts
	skipped []Skipped
}

// Execute runs a checked plan to its end and returns the result. Phases
// start as soon as the phases they depend on are done; a phase whose
// dependency failed or was skipped is skipped, with the reason. Cancel ctx
// to stop: running calls are stopped in stages and the run ends cancelled,
// to be continued with the same journal.
func Execute(ctx context.Context, p *Plan, o Options) *Result {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Runtime == nil {
		o.Runtime = goroutines{}
	}
	x := &executor{p: p, o: o, rt: o.Runtime, outputs: map[string]any{}, counts: map[string]*Counts{}}
	if o.Concurrency > 0 {
		x.sem = x.rt.NewSemaphore(ctx, o.Concurrency)
	}
	if o.Journal != nil {
		// A resume goes on from what the journal saw: the agents it
		// started and the tokens they spent count against the caps.
		x.agents, x.usage = o.Journal.Count(), o.Journal.Spent()
		x.capTokens()
	}
	res := &Result{RunID: o.RunID, Plan: p.Name, Started: o.Now().UTC()}
	results := make([]PhaseResult, len(p.Phases))
	done := make([]Latch, len(p.Phases))
	index := map[string]int{}
	for i, ph := range p.Phases {
		done[i] = x.rt.NewLatch(ctx)
		index[ph.ID] = i
		x.counts[ph.ID] = &Counts{}
	}
	wg := x.rt.NewGroup(ctx)
	for i := range p.Phases {
		wg.Add(1)
		x.rt.Go(ctx, func(ctx context.Context) {
			defer wg.Done()
			defer done[i].Open()
			ph := &p.Phases[i]
			prev := ""
			if i > 0 {
				prev = p.Phases[i-1].ID
			}
			for _, d := range ph.Deps(prev) {
				done[index[d]].Wait(ctx)
				if why := blocks(&results[index[d]]); why != "" {
					results[i] = PhaseResult{ID: ph.ID, Shape: ph.Shape(), Status: PhaseSkipped, Reason: fmt.Sprintf("it depends on phase %s, %s", d, why)}
					x.skip(ph.ID, results[i].Reason)
					x.event(ph, PhaseSkipped)
					return
				}
			}
			results[i] = x.phase(ctx, ph)
			x.mu.Lock()
			x.outputs[ph.ID] = results[i].Output
			x.mu.Unlock()
			x.event(ph, results[i].Status)
		})
	}
	wg.Wait(ctx)
	res.Phases, res.Outputs, res.Skipped = results, x.outputs, x.skipped
	res.Agents, res.Usage = x.agents, x.usage
	res.Status, res.Reason = x.status(ctx, results)
	res.Finished = o.Now().UTC()
	return res
}

// blocks says why a finished phase stops the phases that depend on it: it
// failed, was skipped, or a writer's change in it did not land (what
// depends on it would work on a tree without that change). "" lets them run.
func blocks(ph *PhaseResult) string {
	switch ph.Status {
	case PhaseSkipped:
		return "which was skipped"
	case PhaseFailed:
		return "which failed"
	}
	for _, c := range ph.Calls {
		if c.Status == CallNotApplied {
			return fmt.Sprintf("where the change of call %s was not applied to the tree", c.Key)
		}
	}
	return ""
}

// status is the run's status from its phases.
func (x *executor) status(ctx context.Context, phases []PhaseResult) (string, string) {
	if ctx.Err() != nil {
		return RunCancelled, "the run was cancelled; continue it with brood workflow resume " + x.o.RunID
	}
	failed := 0
	var why []string
	for _, ph := range phases {
		switch ph.Status {
		case PhaseFailed, PhaseSkipped:
			failed++
			why = append(why, fmt.Sprintf("phase %s %s", ph.ID, ph.Status))
		case PhasePartial:
			why = append(why, fmt.Sprintf("phase %s partial", ph.ID))
		}
	}
	if x.stopped != "" {
		why = append([]string{x.stopped}, why...)
	}
	switch {
	case failed == len(phases):
		return RunFailed, strings.Join(why, "; ")
	case len(why) > 0:
		return RunPartial, strings.Join(append(why, x.notes...), "; ")
	}
	return RunDone, strings.Join(x.notes, "; ")
}

// note keeps a remark for the run's reason (an each over nothing).
func (x *executor) note(s string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.notes = append(x.notes, s)
}

func (x *executor) skip(id, reason string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.skipped = append(x.skipped, Skipped{ID: id, Reason: reason})
}

// scope is what a template in a phase sees: inputs (the user's, marked
// Own) and finished outputs (agents', untrusted).
func (x *executor) scope() map[string]any {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := make(map[string]any, len(x.outputs)+1)
	for k, v := range x.outputs {
		s[k] = v
	}
	s["inputs"] = Own(x.o.Inputs)
	return s
}

// event reports a phase's counts.
func (x *executor) event(ph *Phase, status string) {
	if x.o.Events == nil {
		return
	}
	x.mu.Lock()
	c := *x.counts[ph.ID]
	x.mu.Unlock()
	x.o.Events(Event{RunID: x.o.RunID, Phase: ph.ID, Shape: ph.Shape(), Status: status, Counts: c})
}

// count changes a phase's counts.
func (x *executor) count(ph *Phase, f func(c *Counts)) {
	x.mu.Lock()
	f(x.counts[ph.ID])
	x.mu.Unlock()
	x.event(ph, "running")
}

// phase runs one phase by its shape.
func (x *executor) phase(ctx context.Context, ph *Phase) PhaseResult {
	switch ph.Shape() {
	case "parallel":
		return x.parallel(ctx, ph)
	case "each":
		return x.each(ctx, ph)
	case "until_quiet":
		return x.untilQuiet(ctx, ph)
	case "votes":
		return x.votes(ctx, ph)
	}
	return PhaseResult{ID: ph.ID, Status: PhaseFailed, Reason: "the phase has no shape"}
}

// call runs one agent call of the plan: from the journal if it finished
// before, else through the runner (continuing its task if it was started).
func (x *executor) call(ctx context.Context, ph *Phase, key string, c *Call, scope map[string]any) CallRecord {
	rec := CallRecord{Key: key, Agent: c.Agent}
	var ent Entry
	if x.o.Journal != nil {
		ent, _ = x.o.Journal.Lookup(key)
		if ent.Done != nil && ent.Done.Status != CallCancelled {
			x.count(ph, func(n *Counts) { journaled(n, ent.Done) })
			return *ent.Done
		}
	}
	prompt, err := Render(c.Prompt, scope)
	if err != nil {
		rec.Status, rec.Error = "failed", err.Error()
		x.count(ph, func(n *Counts) { dequeue(n); n.Failed++ })
		return rec
	}
	// The slot first, then the budget: a call that waited for a slot is
	// judged against max_agents and max_tokens as they are when it could
	// start, not as they were when it was queued.
	if !x.acquire(ctx) {
		rec.Status, rec.Error = CallCancelled, "the run was cancelled before this call started"
		x.count(ph, func(n *Counts) { dequeue(n); n.Cancelled++ })
		return rec
	}
	defer x.release()
	if ent.TaskID == "" {
		if why := x.reserve(ctx); why != "" {
			rec.Status, rec.Error = CallSkipped, why
			x.count(ph, func(n *Counts) { dequeue(n); n.Skipped++ })
			return rec
		}
	}
	spec := x.spec(c, prompt)
	if ent.TaskID != "" {
		spec.Resume, spec.Continue = ent.TaskID, true
	} else {
		spec.TaskID = x.o.NewTaskID()
		if x.o.Journal != nil {
			if err := x.o.Journal.Started(key, spec.TaskID); err != nil {
				rec.Status, rec.Error = "failed", "journal: "+err.Error()
				return rec
			}
		}
	}
	x.count(ph, func(n *Counts) { dequeue(n); n.Running++ })
	asked := x.o.Now()
	r, err := x.o.Runner.Call(ctx, spec)
	localTimes(r, asked)
	rec = recordOf(key, c.Agent, spec, r, err)
	if ctx.Err() != nil && rec.Output == nil && rec.Status != CallCancelled {
		// Stopped because the run was: however its child ended, the call
		// is continued when the run is resumed.
		rec.Error = strings.TrimSpace(fmt.Sprintf("stopped with the run (the task ended %s) %s", rec.Status, rec.Error))
		rec.Status = CallCancelled
	}
	var before model.Usage // what the journal already counts of this call
	if ent.Done != nil {
		before = ent.Done.Usage
	}
	x.finish(rec, before)
	if x.o.Journal != nil && (err == nil || !spec.Continue) {
		// A call that could not be picked up again (its task still
		// running elsewhere) stays open in the journal for the next resume.
		_ = x.o.Journal.Finished(key, rec)
	}
	x.count(ph, func(n *Counts) { n.Running--; bump(n, &rec) })
	return rec
}

// stoppedWhileRunning: a task that ended so was stopped before it
// finished (a cancel, a kill): a writer's work is then kept, never
// brought back, so its patch is not-applied without any conflict.
func stoppedWhileRunning(status string) bool {
	return status == dispatch.StatusCancelled || status == dispatch.StatusKilled
}

// KeptWithTask is where a not-applied call's record says its patch is,
// until an engine keeps it elsewhere (the fleet's submitter writes it into
// the project and names that file instead).
func KeptWithTask(taskID string) string {
	return "its patch is kept with task " + taskID + " (brood tasks show " + taskID + ")"
}

func dequeue(n *Counts) {
	if n.Queued > 0 {
		n.Queued--
	}
}

// queue adds k expected calls to a phase's queue.
func (x *executor) queue(ph *Phase, k int) {
	x.count(ph, func(n *Counts) { n.Queued += k })
}

// journaled counts a call a resume takes from the journal, done before.
func journaled(n *Counts, rec *CallRecord) {
	dequeue(n)
	bump(n, rec)
	if rec.Output != nil && len(rec.Code) == 0 {
		n.Journaled++
	}
}

func bump(n *Counts, rec *CallRecord) {
	switch {
	case rec.Output != nil && len(rec.Code) > 0:
		n.Landing++
	case rec.Output != nil:
		n.Done++
	case rec.Status == CallSkipped:
		n.Skipped++
	case rec.Status == CallCancelled:
		n.Cancelled++
	case rec.Status == CallNotApplied:
		n.NotApplied++
	default:
		n.Failed++
	}
}

// Counts are a finished phase's calls by state, from its records: what
// the last progress of the phase says once the run's changes are landed
// (a fleet run's writers are done or not-applied by then).
func (ph *PhaseResult) Counts() Counts {
	var n Counts
	for i := range ph.Calls {
		c := ph.Calls[i]
		c.Code = nil
		bump(&n, &c)
	}
	return n
}

// spec is the call.Spec of a plan call.
func (x *executor) spec(c *Call, prompt string) call.Spec {
	s := call.Spec{Agent: c.Agent, Prompt: prompt, Description: CallDescription(x.p.Name, c, prompt), Schema: c.Schema, Isolation: c.Isolation, Parent: "workflow " + x.o.RunID}
	s.Limits.MaxTurns = c.MaxTurns
	if d, _ := c.timeout(); d > 0 {
		s.Limits.TimeoutMS = d.Milliseconds()
	}
	return s
}

// CallDescription is the description a call of plan planName with prompt
// gets: its own, else the plan's name and the prompt's first line. It is
// derived from the plan and the prompt alone, so a fleet worker checks it
// against the signed plan (the child's model reads it).
func CallDescription(planName string, c *Call, prompt string) string {
	if c.Description != "" {
		return c.Description
	}
	d := planName + ": " + textline.Line(prompt, 0)
	if len(d) > 80 {
		n := 77
		for n > 0 && !utf8.RuneStart(d[n]) {
			n-- // never half a character: a worker compares it after JSON
		}
		d = d[:n] + "..."
	}
	return d
}

// ByteCutDescription is the description a plan's call got before
// CallDescription cut on a character's boundary (77 bytes, then "..."),
// as it arrives after JSON (a stray byte reads as U+FFFD): a worker
// accepts it from runs begun by older workflows.
func ByteCutDescription(planName string, c *Call, prompt string) string {
	d := planName + ": " + textline.Line(prompt, 0)
	if c.Description != "" || len(d) <= 80 {
		return CallDescription(planName, c, prompt)
	}
	var b strings.Builder
	for s := d[:77]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD") // one per byte, as encoding/json writes it
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String() + "..."
}

// recordOf turns a call's result into the plan's record of it.
func recordOf(key, agent string, spec call.Spec, r *call.Result, err error) CallRecord {
	rec := CallRecord{Key: key, Agent: agent, TaskID: spec.TaskID}
	if spec.Resume != "" {
		rec.TaskID = spec.Resume
	}
	if err != nil {
		rec.Status, rec.Error = "failed", err.Error()
		return rec
	}
	rec.TaskID, rec.Status, rec.Error, rec.Failures = r.TaskID, r.Status, r.Error, r.Failures
	rec.Attempts, rec.Usage, rec.Code, rec.Worker = r.Attempts, r.Usage, r.Code, r.Worker
	rec.QueuedMS, rec.RanMS = r.QueuedMS, r.RanMS
	if r.Status == call.StatusDone && len(r.Failures) > 0 {
		// The child said done, but what it gave cannot be used: the
		// status says why.
		rec.Status = CallUnverified
		if strings.HasPrefix(r.Failures[len(r.Failures)-1], call.InvalidOutput) {
			rec.Status = CallInvalid
		}
		rec.Error = strings.TrimSpace(r.Failures[len(r.Failures)-1] + "; " + rec.Error)
		rec.Error = strings.TrimSuffix(rec.Error, ";")
	}
	if r.Patch == call.PatchNotApplied && stoppedWhileRunning(r.Status) {
		// It was stopped, not refused: its work so far is kept, never
		// applied, and the status stays how it ended.
		how := r.Status + " while it ran"
		if e := strings.TrimSuffix(r.Error, "."); e != "" && e != context.Canceled.Error() {
			how += " (" + e + ")"
		}
		rec.Error = how + ": what it changed so far did not land in the tree; " + KeptWithTask(rec.TaskID)
		return rec
	}
	if r.Patch == call.PatchNotApplied {
		// Its work did not land: whatever it reports is about a tree
		// that is not the run's.
		rec.Status = CallNotApplied
		rec.Error = "its change was not applied to the tree (it conflicts with what another call wrote there); " + KeptWithTask(rec.TaskID)
		return rec
	}
	if !r.OK() {
		return rec
	}
	if len(spec.Schema) > 0 {
		var v any
		if json.Unmarshal(r.Output, &v) == nil {
			rec.Output = v
		}
		return rec
	}
	rec.Output = r.Summary
	return rec
}

// reserve counts a new agent against max_agents and max_tokens; it
// returns why the agent may not start.
func (x *executor) reserve(ctx context.Context) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopped != "" {
		return x.stopped
	}
	if ctx.Err() != nil {
		return "the run was cancelled"
	}
	if x.agents >= x.p.maxAgents() {
		x.stopped = fmt.Sprintf("max_agents (%d) reached: no new agent starts", x.p.maxAgents())
		return x.stopped
	}
	x.agents++
	return ""
}

// finish adds a call's usage and stops new agents at max_tokens. before
// is what the journal already counted of the same call (a continued
// call's record counts every run of its task).
func (x *executor) finish(rec CallRecord, before model.Usage) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.usage = x.usage.Add(usageSince(rec.Usage, before))
	x.capTokens()
}

// capTokens stops new agents once max_tokens is reached (x.mu held, or
// before the run starts).
func (x *executor) capTokens() {
	if x.p.MaxTokens > 0 && x.stopped == "" && tokens(x.usage) >= x.p.MaxTokens {
		x.stopped = fmt.Sprintf("max_tokens (%d) reached after %d tokens: no new agent starts", x.p.MaxTokens, tokens(x.usage))
	}
}

// usageSince is u less what was already counted of it (never below zero).
func usageSince(u, before model.Usage) model.Usage {
	d := func(a, b int64) int64 { return max(a-b, 0) }
	return model.Usage{Input: d(u.Input, before.Input), Output: d(u.Output, before.Output), CacheRead: d(u.CacheRead, before.CacheRead), CacheWrite: d(u.CacheWrite, before.CacheWrite), WebSearches: d(u.WebSearches, before.WebSearches)}
}

func tokens(u model.Usage) int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

func (x *executor) acquire(ctx context.Context) bool {
	if x.sem == nil {
		return ctx.Err() == nil
	}
	return x.sem.Acquire(ctx)
}

func (x *executor) release() {
	if x.sem != nil {
		x.sem.Release()
	}
}
