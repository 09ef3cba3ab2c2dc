package temporal

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"go.temporal.io/api/serviceerror"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// A keyless submitter signs nothing, so the replay of a single call's
// start (ownStart) can check only that it is a call of that very task
// brood would start: whoever can start workflows in the namespace can
// start a new execution of brood-call-TASK with a brief of their own
// once the user's ended, and brood tasks show / tasks resume would take
// it as the user's call (review28 P2-1). The checkout the call was
// submitted from keeps the digest of every start input it sent for the
// task, beside the call's landing records in the user's state directory
// of the checkout, which no child writes where Landlock confines it
// (records.go: fleet/TASK/sent.json); where they are, the start a
// replay takes must be one of them. Elsewhere (another checkout, no
// checkout, a record an older brood kept in .git/brood) the call's
// status is said to be unverified.

// sentRecord is the digests of the start inputs a checkout sent for one
// single call's task, oldest first.
type sentRecord struct {
	Inputs []string `json:"inputs"`
	// Runs are the executions those starts made, as ExecuteWorkflow
	// returned them: anyone who reads the namespace's history can start
	// the very same input again (review31 P3-2), so where an input has
	// executions kept, a replayed one must be among them. (An input with
	// none: its submitter stopped between keeping it and the start.)
	Runs []sentRun `json:"runs,omitempty"`
}

// sentRun is one execution a kept start input made.
type sentRun struct {
	Input string `json:"input"`
	Run   string `json:"run"`
}

// keepRun records run, the execution a fresh start of in made (the
// start refuses to attach to a running one: startCall), a start of task's
// call keepSent kept. Best effort: without it the start is taken by its
// input alone, as before.
func (e *Engine) keepRun(ctx context.Context, task string, in CallInputW, run string) {
	file := e.sentFile(ctx, task)
	if file == "" || run == "" || taskdir.CheckStateDir(filepath.Dir(file)) != nil {
		return
	}
	unlock, err := taskdir.LockStateFile(ctx, filepath.Join(filepath.Dir(file), sentLock))
	if err != nil {
		return
	}
	defer unlock()
	var rec sentRecord
	if taskdir.ReadStateJSON(file, maxRecord, &rec) != nil {
		return
	}
	r := sentRun{Input: inputDigest(in), Run: run}
	if !slices.Contains(rec.Runs, r) {
		rec.Runs = append(rec.Runs, r)
		_ = taskdir.WriteStateJSON(file, &rec)
	}
}

// sentLock is the lock file beside sent.json: two calls of one checkout
// (two sessions, a follow-up beside a resume) add their starts one at a
// time, so neither's is lost.
const sentLock = "sent.lock"

// runsOf are the executions kept for the start input digest d.
func (rec *sentRecord) runsOf(d string) []string {
	var out []string
	for _, r := range rec.Runs {
		if r.Input == d {
			out = append(out, r.Run)
		}
	}
	return out
}

// sentFile is the record of task's sent starts of the submitter's
// checkout (landDir; "": this engine has no checkout, or it is not in a
// git repository).
func (e *Engine) sentFile(ctx context.Context, task string) string {
	if e.cfg.Code == nil || e.cfg.Code.Dir == "" {
		return ""
	}
	dir, err := landDir(ctx, e.cfg.Code.Dir, task)
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "sent.json")
}

// inputDigest is the digest of a call's start input as it travels (its
// JSON): the replay's decoded start has the same one (sameJSON).
func inputDigest(in CallInputW) string {
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// keepSent records in, the start input of task's call this submitter is
// about to send, before it is sent (a submitter that dies after the
// start has it recorded). Nothing is kept without a checkout.
func (e *Engine) keepSent(ctx context.Context, task string, in CallInputW) error {
	file := e.sentFile(ctx, task)
	if file == "" {
		return nil
	}
	dir := filepath.Dir(file)
	if err := taskdir.MakeStateDir(dir); err != nil {
		return fmt.Errorf("task %s: keep the digest of its start in %s: %w", task, file, err)
	}
	unlock, err := taskdir.LockStateFile(ctx, filepath.Join(dir, sentLock))
	if err != nil {
		return fmt.Errorf("task %s: keep the digest of its start in %s: %w", task, file, err)
	}
	defer unlock()
	var rec sentRecord
	if err := taskdir.ReadStateJSON(file, maxRecord, &rec); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("task %s: its record of the starts this checkout sent, %s, is unreadable (remove it: the task's status is then said to be unverified): %w", task, file, err)
	}
	if d := inputDigest(in); !slices.Contains(rec.Inputs, d) {
		rec.Inputs = append(rec.Inputs, d)
	}
	if err := taskdir.WriteStateJSON(file, &rec); err != nil {
		return fmt.Errorf("task %s: keep the digest of its start in %s: %w", task, file, err)
	}
	return nil
}

// sentHere is the record of task's starts this checkout sent (nil: none
// kept here).
func (e *Engine) sentHere(ctx context.Context, task string) (*sentRecord, string, error) {
	file := e.sentFile(ctx, task)
	if file == "" {
		return nil, "", nil
	}
	// Anything off (a link on the way, not a regular file, too large,
	// not JSON) is no record: the status is then said to be unverified,
	// never taken as verified by what a child could have written.
	var rec sentRecord
	if taskdir.ReadStateJSON(file, maxRecord, &rec) != nil || len(rec.Inputs) == 0 {
		return nil, file, nil
	}
	return &rec, file, nil
}

// sentBy checks in, the start of task's call execution run that brood
// replays, against the starts this checkout sent, where it keeps them (a
// keyless submitter's only proof that the run is the user's call): nil
// when in is one of them, and run one of the executions kept for it
// (when any is), or when none is kept here (unverified says so).
func (e *Engine) sentBy(ctx context.Context, task string, in CallInputW, run string) error {
	if e.cfg.Signer != nil {
		return nil // its signature says whose it is
	}
	rec, file, err := e.sentHere(ctx, task)
	d := inputDigest(in)
	switch {
	case err != nil:
		return fmt.Errorf("task %s: its record of the starts this checkout sent, %s, is unreadable (%v): nothing of its run is taken; remove the record to show it unverified", task, file, err)
	case rec == nil:
		return nil
	case slices.Contains(rec.Inputs, d):
		if runs := rec.runsOf(d); run == "" || len(runs) == 0 || slices.Contains(runs, run) {
			return nil
		}
		return fmt.Errorf("task %s's latest run on Temporal (execution %s) has the start input this checkout sent, but this checkout did not start it (it keeps the executions it started in %s): someone who can start workflows in namespace %s started your call again, so nothing of that run is taken; run the call again with brood subagent", task, run, file, e.cfg.Namespace)
	}
	return fmt.Errorf("task %s's latest run on Temporal was not started with an input this checkout sent (it keeps the digest of each in %s): someone who can start workflows in namespace %s started it with a brief of their own, so nothing of it is taken; if you resumed the task from another checkout, show or resume it there, else run the call again with brood subagent (and sign your submissions: brood fleet keygen)", task, file, e.cfg.Namespace)
}

// unverified says, for a keyless submitter with no record of task's
// starts here, that the call's status is whoever started its run's ("":
// a key signed it, or this checkout sent it).
func (e *Engine) unverified(ctx context.Context, task string) string {
	if e.cfg.Signer != nil {
		return ""
	}
	if rec, _, err := e.sentHere(ctx, task); err != nil || rec != nil {
		return ""
	}
	return fmt.Sprintf("unverified: this checkout keeps no record of sending a start of task %s and no key signed it, so its run is whoever started it's (anyone who can start workflows in namespace %s can); show it from the checkout it was submitted from, or sign your submissions (brood fleet keygen)", task, e.cfg.Namespace)
}

// keepUnverified is LandCall's answer for a finished run of task that no
// record here says is the user's call (unverified says why): its change
// is never applied, since whoever can start workflows in the namespace
// could have started that run with a brief of their own (review31 P2-2).
// It is kept as a patch, under the landing state directory, for the user
// to read and apply by hand.
func (e *Engine) keepUnverified(ctx context.Context, task, runID string, out *CallOutput, why string) (*CallLanding, error) {
	cl := &CallLanding{TaskID: task, State: "unverified"}
	r := out.Result
	res, err := callChange(&r)
	switch {
	case err != nil:
		return nil, fmt.Errorf("task %s: %w", task, err)
	case res == nil || res.Patch == nil:
		cl.State, cl.Message = "none", "the call brought back no change: nothing to land ("+why+")"
		return cl, nil
	}
	cl.Message = why + "; its change was not applied"
	if e.cfg.Code.StateDir == "" {
		cl.Message += " (and could not be kept here: run brood tasks resume from the checkout the call was submitted from)"
		return cl, nil
	}
	if err := codesnap.CheckPatchSize(*res.Patch); err != nil {
		return nil, fmt.Errorf("task %s: %w", task, err)
	}
	patch, err := e.cfg.Code.Blobs.ReadAll(ctx, *res.Patch)
	if err != nil {
		return nil, fmt.Errorf("task %s: the worker's patch: %w", task, err)
	}
	dir := filepath.Join(e.cfg.Code.StateDir, task) // beside a kept patch's (keepNamed)
	name := callKey(task, runID)
	if !recordKey.MatchString(name) {
		name = task
	}
	file := filepath.Join(dir, name+".unverified.patch")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("task %s: keep its unverified change in %s: %w", task, file, err)
	}
	if err := dispatch.WriteFileAtomic(file, patch); err != nil {
		return nil, fmt.Errorf("task %s: keep its unverified change in %s: %w", task, file, err)
	}
	cl.Message += ": it is kept in " + file + "; read it, and if it is yours apply it by hand (git apply " + file + ")"
	return cl, nil
}

// startError is a call's failed start in one line. An execution of
// brood-call-TASK already running is never taken for this start (the SDK
// would hand back its run id: review34 P3-2): one this checkout started
// (its run kept in sent.json) is said to be the user's own, any other
// one this checkout keeps no record of starting (its run id is kept best
// effort, and an older brood kept it in .git/brood: review35 P3-4).
func (e *Engine) startError(ctx context.Context, task string, err error) error {
	var running *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &running) {
		return fmt.Errorf("start the call on Temporal: %w", err)
	}
	wid := callWorkflowID(task)
	if rec, _, _ := e.sentHere(ctx, task); rec != nil && running.RunId != "" && slices.ContainsFunc(rec.Runs, func(r sentRun) bool { return r.Run == running.RunId }) {
		return fmt.Errorf("task %s: an execution of %s this checkout started (%s) is still running, so nothing was sent: wait for it to end (brood tasks show %s) or cancel it (temporal workflow cancel --workflow-id %s), then send it again", task, wid, running.RunId, task, wid)
	}
	return fmt.Errorf("task %s: another execution of %s is running, one this checkout keeps no record of starting (execution %s), so nothing was sent: unless it is your own earlier call, someone who can start workflows in namespace %s started it; wait for it or end it (temporal workflow terminate --workflow-id %s) and send your call again, or run it as a new task with brood subagent", task, wid, cmp.Or(running.RunId, "unknown"), e.cfg.Namespace, wid)
}
