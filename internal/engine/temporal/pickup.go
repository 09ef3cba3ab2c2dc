package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// A writer's change and its task's records. An attempt given up by the
// server while its child runs (a heartbeat timeout on a loaded or stopped
// worker) does not stop that child at once: it may finish, recording its
// result in the task's records, after the call was scheduled again. A later
// attempt on this worker then finds the task finished and returns that
// result (a task never runs twice) — but its change was in the given-up
// attempt's copy, not in the new one: returned as it was, the call came
// back done with files_changed [] although its child wrote (issue 26, a
// tester's P1-3). So every attempt keeps the change it took from its
// copy, given up or not, in a record of this worker's cache (out of the
// children's reach) named by its call, and a later attempt of the same
// call that finds the task finished returns the result with that change,
// or fails retryably until the given-up attempt has kept it.

// recorder is a runner that can look at a task's records (the worker's
// Dispatcher).
type recorder interface {
	Recorded(ctx context.Context, id string) (*call.Result, bool, error)
}

// keptChange is a writer's change as its attempt kept it.
type keptChange struct {
	Code  json.RawMessage `json:"code,omitempty"`
	Files []string        `json:"files,omitempty"`
}

// changeRecord is the file that keeps task id's change on this worker for
// the call this attempt is one of (its workflow, execution and activity,
// as thisCall names them): only a later attempt of the same call takes it,
// never another call that names the task (review17 R1).
func (a *Activities) changeRecord(ctx context.Context, id string) string {
	c := thisCall(ctx)
	sum := sha256.Sum256([]byte(c.Workflow + "\n" + c.Run + "\n" + c.Activity + "\n" + id))
	return filepath.Join(a.Code.Cache.Dir, "changes", hex.EncodeToString(sum[:])+".json")
}

// forgetChange removes task id's kept change before a child of it runs
// again: a record is the change of the task's latest finished run.
func (a *Activities) forgetChange(ctx context.Context, id string) {
	if a.Code == nil || a.Code.Cache == nil || id == "" || dispatch.CheckID(id) != nil {
		return
	}
	_ = os.Remove(a.changeRecord(ctx, id))
}

// keepChange records r's change (none: an empty record) for a later
// attempt of this call that finds the task finished here.
func (a *Activities) keepChange(ctx context.Context, r *call.Result) {
	if a.Code == nil || a.Code.Cache == nil || r == nil || dispatch.CheckID(r.TaskID) != nil {
		return
	}
	data, err := json.Marshal(keptChange{Code: r.Code, Files: r.FilesChanged})
	if err != nil {
		return
	}
	path := a.changeRecord(ctx, r.TaskID)
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp := path + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
	a.sweepChanges(filepath.Dir(path), time.Now())
}

// keptFor is how long a kept change stays: a call's attempts end well
// within it (RunLifetime bounds a run).
const keptFor = RunLifetime

// sweepEvery is how often a worker sweeps its kept changes at most. A
// sweep reads every record kept (one a call, for keptFor): made by every
// call, each call's cost grew with the worker's calls of the last two
// days (in the 300-call benchmark, 5 % of the workers' CPU by its end).
const sweepEvery = 10 * time.Minute

// sweepChanges removes the kept changes older than keptFor, at the
// worker's first call and then at most every sweepEvery (a record stays
// up to that much longer).
func (a *Activities) sweepChanges(dir string, now time.Time) {
	last := a.swept.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < sweepEvery || !a.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > keptFor {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// pickUp is the output of a writer's call whose task this worker's records
// say finished: its result with the change its child made (nil, nil: not such a call,
// or its records say no such thing; the call goes on as any other). While
// the attempt that ran the child has not kept its change the call fails
// retryably (brood.TaskBusy): never done without its change.
func (a *Activities) pickUp(ctx context.Context, in CallInput, spec call.Spec, hb Heartbeat) (*CallOutput, error) {
	if !spec.Continue || spec.Resume == "" || in.Code == nil || a.Code == nil || a.Code.Cache == nil {
		return nil, nil
	}
	rec, ok := a.Runner.(recorder)
	if !ok {
		return nil, nil
	}
	// A first look that waits for nothing: a task still running (its
	// child holds it) goes the usual way (brood.TaskBusy).
	t, err := dispatch.LoadTask(a.ProjectRoot, spec.Resume)
	if err != nil || t.Result == nil || (t.Envelope != nil && t.Envelope.ReadOnly) {
		return nil, nil
	}
	switch t.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
	default:
		return nil, nil // no change is taken of such an ending
	}
	r, _, err := rec.Recorded(ctx, spec.Resume)
	if err != nil || r == nil || r.Status != t.Status {
		return nil, nil
	}
	b, err := os.ReadFile(a.changeRecord(ctx, spec.Resume))
	var kept keptChange
	if errors.Is(err, os.ErrNotExist) || (err == nil && json.Unmarshal(b, &kept) != nil) {
		return nil, a.notKept(ctx, r.TaskID)
	} else if err != nil {
		return nil, fmt.Errorf("task %s: read its kept change: %w", r.TaskID, err)
	}
	r.Code, r.FilesChanged = kept.Code, kept.Files
	r.Attempts += max(int(activity.GetInfo(ctx).Attempt)-1, 0)
	r.Worker = a.Worker
	hb.Result = Ref{}
	return &CallOutput{Result: *r, Last: &hb}, nil
}
