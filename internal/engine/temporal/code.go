package temporal

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// CodeSite is how a worker runs calls in the submitter's tree: a copy
// materialised per call from the snapshot (internal/codesnap) and a runner
// whose children work there.
type CodeSite struct {
	// Cache holds the worker's clones and per-call copies.
	Cache *codesnap.Cache
	// Blobs is the fleet's store (the snapshot's patch and bundle, the
	// result patch).
	Blobs *blobstore.Store
	// RunnerIn is the worker's call path with its children working in the
	// copy (in co.Dir, mounting co.Mount first when the copy is an
	// overlay): spawn.Dispatcher.In(co.Dir, co.Root, co.Mount), or
	// ReadOnlyIn(co.Dir) for the cache's shared checkout (co.Shared).
	RunnerIn func(co *codesnap.Checkout) (call.Runner, error)
	// ReadOnly reports whether this worker runs an agent read-only (its
	// registry's definition; nil: none is): such a call reads the cache's
	// verified checkout of the snapshot in place, with no private copy.
	ReadOnly func(agent string) bool
}

// copyOf is one call's copy of the submitter's tree on this worker.
type copyOf struct {
	co     *codesnap.Checkout
	runner call.Runner
	// ro: the agent is read-only by this worker's own definitions
	// (Activities.readOnly): the copy is the cache's checkout, read in
	// place, and there is no change to take.
	ro bool
}

// materialise makes the call's copy: the snapshot, plus the partial patch
// an earlier attempt left in its heartbeat. The copy is the call's own
// isolation, so an auto writer works in it in place.
func (a *Activities) materialise(ctx context.Context, in CallInput, id string, hb Heartbeat, spec *call.Spec) (*copyOf, error) {
	if in.Code == nil {
		return nil, nil
	}
	if a.Code == nil {
		return nil, fmt.Errorf("this worker runs calls in its own checkout only (no code cache): the call carries the submitter's tree")
	}
	name := id
	if name == "" {
		name = "call"
	}
	ro := a.readOnly(*spec)
	var co *codesnap.Checkout
	var err error
	a.Times.timed("  copy", func() {
		co, err = a.Code.Cache.Materialise(ctx, a.Code.Blobs, in.Code, codesnap.Options{ID: name, Partial: hb.Code, ReadOnly: ro})
	})
	if err != nil {
		return nil, err
	}
	var r call.Runner
	a.Times.timed("  its dispatcher", func() { r, err = a.Code.RunnerIn(co) })
	if err != nil {
		co.Cleanup()
		return nil, err
	}
	if spec.Isolation == "" || spec.Isolation == "auto" {
		spec.Isolation = "none"
	}
	return &copyOf{co: co, runner: r, ro: ro}, nil
}

// change is the copy's change as a ref for the submitter: none for a
// read-only agent, a call that did not end with a result, or no change.
func (a *Activities) change(ctx context.Context, c *copyOf, r *call.Result) error {
	if c == nil || r == nil {
		return nil
	}
	switch r.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
	default:
		return nil
	}
	if c.ro {
		return nil
	}
	if t, err := dispatch.LoadTask(a.ProjectRoot, r.TaskID); err == nil && t.Envelope != nil && t.Envelope.ReadOnly {
		return nil
	}
	res, err := c.co.Result(context.WithoutCancel(ctx), a.Code.Blobs)
	if err != nil {
		return fmt.Errorf("task %s: the worker could not take its change: %w", r.TaskID, err)
	}
	if res.Patch == nil {
		return nil
	}
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	r.Code = data
	r.FilesChanged = res.Files
	return nil
}

// CodeConfig is the submitter's side: where its tree is and how a
// worker's change comes back into it.
type CodeConfig struct {
	// Blobs is the fleet's store (the same as the workers').
	Blobs *blobstore.Store
	// Dir is the submitter's directory (captured with its dirty state).
	Dir string
	// StateDir keeps a patch that did not apply (empty: a temporary
	// directory, kept only when it holds something).
	StateDir string
	// AllowConfig lets a patch change .brood/, .claude/ and .mcp.json
	// (agents.allow_config_changes); otherwise those are held back.
	AllowConfig bool
	// WriteDenied judges a worker's change by the submitter's own Edit
	// and Write deny rules (its settings'; isolate.WriteDeniedFunc): one
	// that writes a path they forbid is refused whole and kept, never
	// landed, as a local isolated writer's change is. nil: none.
	WriteDenied func(path string) bool
	// AgentDeny is the deny rules of an agent's own definition as this
	// submitter's registry has it (disallowedTools with a specifier:
	// Edit(secrets/**)): a change by that agent writing a path its Edit
	// or Write rules forbid is refused whole and kept, as one the
	// settings forbid, as a local writer's is (its envelope has both).
	// nil: none.
	AgentDeny func(agent string) []string
}

// capture records the submitter's tree for a run's calls.
func (e *Engine) capture(ctx context.Context) (*codesnap.Snapshot, error) {
	if e.cfg.Code == nil {
		return nil, nil
	}
	// The records this run will write (the run's result and journal, kept
	// patches) go under the project's .brood, made here with its
	// .gitignore as the local engine makes it, so the user's git leaves
	// them out; the capture leaves them out whatever the ignore rules say.
	if e.cfg.ProjectRoot != "" {
		if err := taskdir.Open(e.cfg.ProjectRoot).EnsureWritable(); err != nil {
			return nil, fmt.Errorf("keep this run's records in %s: %w", e.cfg.ProjectRoot, err)
		}
	}
	return codesnap.Capture(ctx, e.cfg.Code.Blobs, e.cfg.Code.Dir)
}

// landCall brings a call's change into the submitter's tree, whole or not
// at all, the way a local isolated child's comes back, once under the
// record of the call's workflow run (key: callKey), and says what happened
// on its result; a patch that does not apply is kept and named, never
// forced.
// agent is the call's agent as its submitter sent it: its definition's
// deny rules judge the change, never the agent the result names.
func (e *Engine) landCall(ctx context.Context, key string, snap *codesnap.Snapshot, r *call.Result, agent string) {
	res, err := callChange(r)
	if res == nil || snap == nil {
		if err != nil {
			r.Text += "\n\n[brood: fleet copy: " + err.Error() + "]"
		}
		return
	}
	out := e.land(ctx, callLanding(key, snap, res, cmp.Or(agent, r.Agent)))
	if out.State == landApplied && len(out.Files) > 0 {
		r.FilesChanged = out.Files
	}
	switch out.State {
	case landApplied, landAlready:
		r.Patch = call.PatchApplied
	case landKept, landKeptBefore, landFailed:
		r.Patch = call.PatchNotApplied // the work is not in the tree
	}
	if out.Partial {
		// Part of it is: never done, nor not-applied.
		r.Patch, r.Status = call.PatchPartlyApplied, dispatch.StatusFailed
		r.Error = "its change landed only in part: " + out.Message
	}
	r.Text = tagPatch(r.Text, r.Patch) + "\n\n[brood: " + out.Message + "]"
}

// callChange is the change a call's result brings back (nil: none, or a
// call that did not end with a result).
func callChange(r *call.Result) (*codesnap.Result, error) {
	if len(r.Code) == 0 {
		return nil, nil
	}
	switch r.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
	default:
		return nil, nil
	}
	var res codesnap.Result
	if err := json.Unmarshal(r.Code, &res); err != nil {
		return nil, fmt.Errorf("the worker's change is unreadable (nothing was applied): %w", err)
	}
	if res.Patch == nil {
		return nil, nil
	}
	return &res, nil
}

// callLanding is the landing of a call's change, by agent, against the
// snapshot it ran in.
func callLanding(key string, snap *codesnap.Snapshot, res *codesnap.Result, agent string) landing {
	return landing{key: key, what: "the call's changes", tag: "fleet copy", from: snap, res: res, agents: []string{agent}}
}

// callKey is the landing record of one workflow run of a call's task: a
// resume's run has its own, so its change never passes for the first's.
func callKey(taskID, runID string) string {
	if runID == "" {
		return taskID
	}
	return taskID + "-" + runID
}

// readOnly reports whether the call's agent is read-only by this worker's
// own agent definitions (CodeSite.ReadOnly): what its copy is made for,
// and whether a retry's transcript is cut to it (cutToCopy). Never a
// task's envelope, which its child can rewrite. A call that resumes a task
// is never read-only here: its dispatcher runs the agent the task's own
// records name, not spec.Agent, which a submitter could set to a read-only
// agent's name to have a writer resumed in the shared checkout.
func (a *Activities) readOnly(spec call.Spec) bool {
	return spec.Resume == "" && a.Code != nil && a.Code.ReadOnly != nil && a.Code.ReadOnly(spec.Agent)
}
