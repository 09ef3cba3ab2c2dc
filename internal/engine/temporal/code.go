package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	wf "github.com/broodhq/brood/internal/workflow"
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
	// RunnerIn is the worker's call path with its children working in dir,
	// mounting the copy first when it is an overlay (mount not nil):
	// delegate.Dispatcher.In.
	RunnerIn func(dir string, mount *isolate.Mount) (call.Runner, error)
}

// copyOf is one call's copy of the submitter's tree on this worker.
type copyOf struct {
	co     *codesnap.Checkout
	runner call.Runner
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
	co, err := a.Code.Cache.Materialise(ctx, a.Code.Blobs, in.Code, codesnap.Options{ID: name, Partial: hb.Code})
	if err != nil {
		return nil, err
	}
	r, err := a.Code.RunnerIn(co.Dir, co.Mount)
	if err != nil {
		co.Cleanup()
		return nil, err
	}
	if spec.Isolation == "" || spec.Isolation == "auto" {
		spec.Isolation = "none"
	}
	return &copyOf{co: co, runner: r}, nil
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
}

// capture records the submitter's tree for a run's calls.
func (e *Engine) capture(ctx context.Context) (*codesnap.Snapshot, error) {
	if e.cfg.Code == nil {
		return nil, nil
	}
	return codesnap.Capture(ctx, e.cfg.Code.Blobs, e.cfg.Code.Dir)
}

// applyBack brings a worker's change into the submitter's tree, whole or
// not at all, the way a local isolated child's comes back: what happened
// is a note on the result, and a patch that does not apply is kept and
// named, never forced.
func (e *Engine) applyBack(ctx context.Context, snap *codesnap.Snapshot, code json.RawMessage) (*codesnap.Applied, error) {
	if snap == nil || len(code) == 0 {
		return nil, nil
	}
	var res codesnap.Result
	if err := json.Unmarshal(code, &res); err != nil {
		return nil, fmt.Errorf("the worker's change: %w", err)
	}
	return codesnap.ApplyWith(context.WithoutCancel(ctx), e.cfg.Code.Blobs, e.cfg.Code.Dir, snap, &res,
		codesnap.ApplyOptions{StateDir: e.cfg.Code.StateDir, AllowConfig: e.cfg.Code.AllowConfig})
}

// landRun applies the changes of a run's calls in plan order, each whole or
// not at all (parallel writers' disjoint edits merge against the
// snapshot), and notes on each call what became of it. Calls an earlier
// execution finished (in the journal) were applied by its submitter.
func (e *Engine) landRun(ctx context.Context, in RunInput, res *wf.Result) {
	if in.Code == nil {
		return
	}
	earlier := map[string]bool{}
	for _, l := range in.Journal {
		if l.Type == "done" && l.Rec != nil {
			earlier[l.Key] = true
		}
	}
	for i := range res.Phases {
		for j := range res.Phases[i].Calls {
			c := &res.Phases[i].Calls[j]
			if len(c.Code) == 0 || earlier[c.Key] {
				continue
			}
			r := call.Result{TaskID: c.TaskID, Status: c.Status, Code: c.Code}
			e.landCall(ctx, in.Code, &r)
			c.Landed = strings.TrimSuffix(strings.TrimPrefix(r.Text, "\n\n[brood: "), "]")
		}
	}
}

// landCall applies a call's change and says so on its result.
func (e *Engine) landCall(ctx context.Context, snap *codesnap.Snapshot, r *call.Result) {
	if len(r.Code) == 0 {
		return
	}
	switch r.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
	default:
		return
	}
	ap, err := e.applyBack(ctx, snap, r.Code)
	var msg string
	switch {
	case err != nil:
		msg = "fleet copy: bringing the changes back failed (nothing was applied): " + err.Error()
	case ap == nil:
		return
	default:
		msg = "fleet copy: " + ap.Message()
		if ap.Conflict == "" && len(ap.Files) > 0 {
			r.FilesChanged = ap.Files
		}
	}
	r.Text += "\n\n[brood: " + msg + "]"
}
