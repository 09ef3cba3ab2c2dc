package spawn

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/taskdir"
)

// Call runs one agent call to its verified end: the one path that the Task
// tool, `brood subagent`, `brood tasks resume` and the workflow engine all
// take (it makes the Dispatcher a call.Runner): call.Do runs the stages of
// call.Local (attempt.go). With a schema, an answer that does not validate
// is sent back to the same task up to the spec's retries (a dispatcher
// without Extras.Schemas refuses a call with one).
func (d *Dispatcher) Call(ctx context.Context, s call.Spec) (*call.Result, error) {
	// A traced spawn (brood bench --trace) marks its stages on ctx.
	return call.Do(spawntrace.Start(ctx, os.Getenv), d, d.cfg.Extras.Schemas, s)
}

// seedTranscript puts a conversation begun elsewhere into a new task's
// transcript, so its child continues it (with the continue prompt as its
// next turn, or the follow-up next when one is given) instead of starting
// over; env, not yet written, says so.
func seedTranscript(td *taskdir.Dir, env *dispatch.Envelope, path, next string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("continue task %s: %w", env.TaskID, err)
	}
	if err := td.WriteFile(taskdir.Session, b, true); err != nil {
		return fmt.Errorf("continue task %s: %w", env.TaskID, err)
	}
	env.Prompt = call.ContinuePrompt
	if next != "" {
		env.Prompt = next
	}
	env.ResumeCount = 1
	return nil
}

// lowerLimits lowers env's limits to l's (never raises them) and reports
// whether any changed.
func lowerLimits(env *dispatch.Envelope, l call.Limits) bool {
	changed := false
	if l.MaxTurns > 0 && (env.MaxTurns == 0 || l.MaxTurns < env.MaxTurns) {
		env.MaxTurns, changed = l.MaxTurns, true
	}
	if l.TimeoutMS > 0 && (env.TimeoutMS == 0 || l.TimeoutMS < env.TimeoutMS) {
		env.TimeoutMS, changed = l.TimeoutMS, true
	}
	if l.TokenBudget > 0 && (env.TokenBudget == 0 || l.TokenBudget < env.TokenBudget) {
		env.TokenBudget, changed = l.TokenBudget, true
	}
	return changed
}

// resultOf is a call's result from its records: the verified result, the
// process's outcome, the rendered text, the verification failures and what
// became of its patch.
func resultOf(id string, res *dispatch.Result, o *dispatch.Output, text string, fails []string, patch string) *call.Result {
	r := &call.Result{TaskID: id, Text: text, Failures: fails, Record: res, Process: o, Patch: patch}
	if res != nil {
		r.Agent, r.Status, r.Summary, r.Error = res.Agent, res.Status, res.Summary, res.Error
		r.Usage = res.Usage.Add(res.ChildUsage)
		r.FilesChanged = res.FilesChanged
	}
	return r
}

// recorded looks at an interrupted call's records: a task that finished is
// returned as its verified result (it never runs twice); started reports
// whether it got as far as an envelope. A task that was stopped (killed,
// cancelled) yields neither, and is resumed.
func (d *Dispatcher) recorded(ctx context.Context, id string) (r *call.Result, started bool, err error) {
	if err := dispatch.CheckID(id); err != nil {
		return nil, false, err
	}
	t, err := d.settled(ctx, id)
	if err != nil {
		return nil, true, err
	}
	if t == nil {
		return nil, false, nil
	}
	switch t.Status {
	case dispatch.StatusKilled, dispatch.StatusCancelled:
		return nil, true, nil
	}
	if t.Result == nil {
		return nil, true, nil
	}
	// What the task is comes from the owner record, out of the child's reach.
	own, err := dispatch.ReadOwner(*d.cfg.Owners, id)
	if err != nil || own.TaskID != id {
		return nil, true, fmt.Errorf("task %s: its owner record is missing; it cannot be trusted", id)
	}
	res, fails, _ := dispatch.VerifyDir(t.Files(), dispatch.Expect{TaskID: id, Agent: own.Agent})
	if res == nil {
		return nil, true, nil
	}
	if v := t.Verdict; v != nil && v.FilesChanged != nil {
		res.FilesChanged = v.FilesChanged // the parent's walks, not the child's claim
	}
	// The parent's verdict decides, not the child's file: a rejected run
	// stays rejected, and a result.json changed since reads as such.
	res.Status = t.Status
	if v := t.Verdict; v != nil {
		fails = append(slices.Clone(v.Reasons), fails...)
	}
	if t.Trust == dispatch.TrustRejected && len(fails) == 0 {
		fails = append(fails, t.Note)
	}
	return resultOf(id, res, t.Output, renderTask(t), fails, ""), true, nil
}

// settled loads a task once no process runs it any more: a child whose
// parent died winds down on its own (it sees its stdin close), so this
// waits for it, up to a few kill graces. nil means the task never got an
// envelope.
func (d *Dispatcher) settled(ctx context.Context, id string) (*dispatch.Task, error) {
	limit := 3 * d.cfg.Settings.Pool.KillGrace.Duration
	if limit <= 0 {
		limit = 15 * time.Second
	}
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		t, err := d.finder().Load(id)
		if err != nil {
			return nil, nil
		}
		if t.Status != dispatch.StatusRunning && t.Status != dispatch.StatusQueued {
			return t, nil
		}
		if time.Now().After(deadline) {
			// Busy, not failed: a fleet worker's retry waits for it (a
			// worker stopped past its heartbeat timeout still holds it).
			return nil, busyError(fmt.Sprintf("task %s is still %s: its process outlived the run that started it; stop it with brood tasks kill %s, then resume", id, t.Status, id))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
