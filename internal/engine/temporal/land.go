package temporal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/taskdir"
	wf "github.com/broodhq/brood/internal/workflow"
)

// landRecord is what a repository knows of one fleet change: a plan run's
// trees, or a single call's change (one record per workflow run of the
// call), so every submitter — the first, or a resume after it died —
// lands exactly what is not in the work tree yet, and nothing twice. It is
// kept in the user's state directory of the checkout (landDir:
// fleet/KEY/landed.json), outside every tree a child writes.
type landRecord struct {
	// Key is the record's: a run's id, or a call's TASK_ID-WORKFLOW_RUN.
	Key string `json:"key"`
	// Landed is a run's tree as last brought into the work tree (nil:
	// none yet; the submit snapshot is what the tree had): where its next
	// landing starts.
	Landed *codesnap.Snapshot `json:"landed,omitempty"`
	// Done is the change last brought into the work tree, by its id (a
	// run's tree; a call's patch).
	Done string `json:"done,omitempty"`
	// Landing is a change begun and not recorded as ended (its id): a
	// submitter that died in between (it is checked against the work tree).
	Landing string `json:"landing,omitempty"`
	// Kept is a change that did not apply (kept for the user, not tried
	// again), and Message what was said last.
	Kept    string `json:"kept,omitempty"`
	Message string `json:"message,omitempty"`
}

// landing is one change to bring into the submitter's tree at most once:
// a plan run's tree (to), or a single call's patch (res).
type landing struct {
	key  string             // the record: fleet/KEY/landed.json (landDir)
	what string             // what the messages call it ("the run's changes")
	tag  string             // the messages' prefix ("fleet")
	from *codesnap.Snapshot // the tree the change is against (a run's: unless part of it is landed)
	to   *codesnap.Snapshot // a run's tree (its tip); nil for a call
	res  *codesnap.Result   // a call's change against from; nil for a run
	// again tries a change an earlier landing kept (it did not apply)
	// once more: a resume of the run, after the user made room for it.
	again bool
	// agents wrote the change: their definitions' deny rules judge it
	// (writeDenied).
	agents []string
}

// id names the change in the record.
func (l *landing) id() string {
	if l.to != nil {
		return l.to.Tree
	}
	return patchID(l.res)
}

// patchID names a call's change in its record: its patch's digest.
func patchID(res *codesnap.Result) string { return "patch:" + res.Patch.SHA256 }

func (l *landing) inTree(ctx context.Context, blobs *blobstore.Store, dir string) (bool, error) {
	if l.to != nil {
		return codesnap.Landed(ctx, blobs, dir, l.from, l.to)
	}
	return codesnap.InTree(ctx, blobs, dir, l.res)
}

func (l *landing) apply(ctx context.Context, blobs *blobstore.Store, dir string, opts codesnap.ApplyOptions) (*codesnap.Applied, error) {
	if l.to != nil {
		return codesnap.Land(ctx, blobs, dir, l.from, l.to, opts)
	}
	return codesnap.ApplyWith(ctx, blobs, dir, l.from, l.res, opts)
}

// landState is where a landing left its change.
type landState int

const (
	landFailed     landState = iota // not in the tree; try again
	landBusy                        // another brood is landing it now
	landApplied                     // in the tree now (this landing, or one a dead submitter did)
	landAlready                     // in the tree before
	landKept                        // did not apply: kept and named, never tried again
	landKeptBefore                  // kept by an earlier landing
	landElsewhere                   // this submitter has no tree to land it in
)

// landOutcome is what a landing did: one line for the user, and the files
// it applied.
type landOutcome struct {
	Message string
	State   landState
	Files   []string
	// Partial: the landing failed partway and could not put back all
	// it wrote (part of the change is in the tree).
	Partial bool
}

// land brings one change into the submitter's tree, whole or not at all,
// the way a local isolated writer's change comes back, at most once
// whoever lands it: the record is locked, a landing is marked before git
// writes anything and recorded after, and a mark a dead submitter left is
// checked against the work tree (the change applies in reverse).
func (e *Engine) land(ctx context.Context, l landing) landOutcome {
	if e.cfg.Code == nil {
		return landOutcome{State: landElsewhere, Message: l.what + " are on the fleet, not here: land them from the repository they were submitted from"}
	}
	ctx = context.WithoutCancel(ctx)
	failed := func(why string) landOutcome {
		return landOutcome{Message: l.tag + ": " + l.what + " were not landed (nothing was applied): " + why}
	}
	dir, err := landDir(ctx, e.cfg.Code.Dir, l.key)
	if err == nil {
		err = taskdir.MakeStateDir(dir)
	}
	if err != nil {
		return failed(err.Error())
	}
	unlock, err := dispatch.LockTask(dir)
	if errors.Is(err, dispatch.ErrTaskBusy) {
		return landOutcome{Message: "another brood is landing " + l.what + " in this repository now", State: landBusy}
	} else if err != nil {
		return failed(err.Error())
	}
	defer unlock()
	file := filepath.Join(dir, "landed.json")
	var rec landRecord
	if err := taskdir.ReadStateJSON(file, maxRecord, &rec); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return failed("its record " + file + " is unreadable (remove it to land them again): " + err.Error())
	}
	rec.Key = l.key
	if l.to != nil && rec.Landed != nil {
		l.from = rec.Landed
	}
	id := l.id()
	switch {
	case rec.Done == id || l.to != nil && l.from.Tree == l.to.Tree:
		return landOutcome{Message: l.tag + ": " + l.what + " are in your tree already", State: landAlready}
	case rec.Kept == id && !l.again:
		return landOutcome{Message: rec.Message, State: landKeptBefore}
	}
	said := l.tag + ": "
	if rec.Kept == id {
		said, rec.Kept = l.tag+": the landing that did not apply before was tried again: ", ""
	}
	blobs, work := e.cfg.Code.Blobs, e.cfg.Code.Dir
	if rec.Landing == id {
		if ok, _ := l.inTree(ctx, blobs, work); ok {
			rec.landed(&l, id, l.tag+": "+l.what+" are in your tree (landed before its submitter stopped)")
			return rec.save(file, landOutcome{State: landApplied})
		}
	}
	rec.Landing = id
	if err := taskdir.WriteStateJSON(file, &rec); err != nil {
		return failed(err.Error())
	}
	state, err := landStateDir(e.cfg.Code.StateDir, l.key)
	if err != nil {
		return failed(err.Error())
	}
	ap, err := l.apply(ctx, blobs, work, codesnap.ApplyOptions{StateDir: state, AllowConfig: e.cfg.Code.AllowConfig,
		WriteDenied: e.writeDenied(l.agents)})
	if state != "" && (err != nil || ap.Conflict == "" && ap.ConfigPatch == "" || keepNamed(ap, e.cfg.Code.StateDir, l.key)) {
		os.RemoveAll(state) // nothing kept there (what was is named now)
	}
	rec.Landing = ""
	switch {
	case err != nil:
		rec.Message = said + "bringing " + l.what + " back failed (nothing was applied): " + err.Error()
		return rec.save(file, landOutcome{State: landFailed})
	case ap.Conflict != "":
		rec.Kept, rec.Message = id, said+ap.Message()
		return rec.save(file, landOutcome{State: landKept, Partial: len(ap.Partial) > 0})
	}
	rec.landed(&l, id, said+ap.Message())
	return rec.save(file, landOutcome{State: landApplied, Files: ap.Files})
}

// writeDenied judges a change the agents wrote: by the submitter's own
// Edit and Write deny rules (CodeConfig.WriteDenied) and by each agent's
// definition's (AgentDeny), as a local writer's landing judges by its
// envelope, which has both (nil: no rule forbids a path).
func (e *Engine) writeDenied(agents []string) func(string) bool {
	settings := e.cfg.Code.WriteDenied
	var rules []string
	if e.cfg.Code.AgentDeny != nil {
		for _, a := range agents {
			rules = append(rules, e.cfg.Code.AgentDeny(a)...)
		}
	}
	own := isolate.WriteDeniedFunc(&dispatch.Envelope{Permissions: dispatch.Permissions{Deny: rules}, Workspace: e.cfg.Code.Dir})
	switch {
	case own == nil:
		return settings
	case settings == nil:
		return own
	}
	return func(p string) bool { return settings(p) || own(p) }
}

// runAgents are the agents a run's plan names (its tree holds the
// changes of its writers among them).
func runAgents(in RunInput) []string {
	if in.Plan == nil {
		return nil
	}
	return planAgents(in.Plan)
}

// landed records the change as in the work tree.
func (rec *landRecord) landed(l *landing, id, msg string) {
	rec.Done, rec.Landing, rec.Message = id, "", msg
	if l.to != nil {
		rec.Landed = l.to
	}
}

// save writes the record (tmp and rename) and returns out with its message.
func (rec *landRecord) save(file string, out landOutcome) landOutcome {
	out.Message = rec.Message
	if err := taskdir.WriteStateJSON(file, rec); err != nil {
		out.Message += " (its record " + file + " was not saved: " + err.Error() + ")"
	}
	return out
}

// readLanded is a record as it is now, without its lock (nil: none yet).
func (e *Engine) readLanded(ctx context.Context, key string) (*landRecord, error) {
	if e.cfg.Code == nil {
		return nil, nil
	}
	dir, err := landDir(ctx, e.cfg.Code.Dir, key)
	if err != nil {
		return nil, err
	}
	var rec landRecord
	if err := taskdir.ReadStateJSON(filepath.Join(dir, "landed.json"), maxRecord, &rec); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &rec, nil
}

// landRun lands a plan's tree in the submitter's: the change from what
// this repository has of the run (the submit snapshot at first) to the
// run's tip. It says what happened (the run's landed).
func (e *Engine) landRun(ctx context.Context, in RunInput) string {
	return e.landRunOut(ctx, in).Message
}

// landRunOut is landRun with the landing's state (landAlready when there
// is nothing to land).
func (e *Engine) landRunOut(ctx context.Context, in RunInput) landOutcome {
	return e.landTree(ctx, in, false)
}

// landTree is landRunOut; again: a tree an earlier landing kept is tried
// once more (brood workflow resume).
func (e *Engine) landTree(ctx context.Context, in RunInput, again bool) landOutcome {
	if in.Code == nil || in.Tip == nil || in.Tip.Tree == in.Code.Tree {
		return landOutcome{State: landAlready}
	}
	if e.cfg.Code == nil {
		return landOutcome{State: landElsewhere, Message: "the run's changes are on the fleet, not here: resume it from the repository it was submitted from to land them"}
	}
	out := e.land(ctx, landing{key: in.RunID, what: "the run's changes", tag: "fleet", from: in.Code, to: in.Tip, again: again, agents: runAgents(in)})
	if out.State == landAlready {
		out.Message = alreadyLanded
	}
	return out
}

// settleTree lands a finished execution's tree and says on res what
// became of it: a tree that did not land makes the calls whose changes are
// in it not-applied and the run failed or partial, as a local run whose
// writer's change does not apply (never done about work that is not in
// the tree). again: a tree an earlier landing kept is tried once more
// (landTree). It returns what the landing said.
func (e *Engine) settleTree(ctx context.Context, in RunInput, res *wf.Result, again bool) string {
	out := e.landTree(ctx, in, again)
	e.keepPatches(ctx, res)
	if res != nil {
		res.Landed = out.Message
		if notLanded(out.State) {
			res.NotLanded(strings.TrimPrefix(out.Message, "fleet: "))
		}
	}
	return out.Message
}

// notLanded: the landing left the change out of the work tree for good
// (kept), or failed; not a landing another brood is making now, nor one
// left for the submitter's own repository.
func notLanded(s landState) bool {
	return s == landKept || s == landKeptBefore || s == landFailed
}

// alreadyLanded is landRun's word for a run whose tree this repository has.
const alreadyLanded = "fleet: the run's changes are in your tree already"

// recordKey is a landing record's key: a run's id, or a task id and the
// call's workflow run (TASK_ID-RUN).
var recordKey = regexp.MustCompile(`^[0-9A-Za-z]{26}(-[0-9A-Za-z-]{1,64})?$`)

// landDir is the record directory of key for the checkout holding dir:
// fleet/KEY in the user's state directory of its common git dir, resolved
// (taskdir.CheckoutDir: outside every tree a child writes, taken over
// from where this checkout was before it moved; records.go). The
// checkout's directory is placed, and made, by any call (CheckoutDir);
// fleet/KEY only by land and keepSent, never by a read.
func landDir(ctx context.Context, dir, key string) (string, error) {
	id, _, _ := strings.Cut(key, "-")
	if err := dispatch.CheckID(id); err != nil || !recordKey.MatchString(key) {
		return "", fmt.Errorf("%q is not a run id nor a call's TASK_ID-RUN", key)
	}
	out, err := gitx.Run(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("%s is not in a git repository: %w", dir, err)
	}
	common, err := filepath.EvalSymlinks(strings.TrimSpace(out))
	if err != nil {
		return "", fmt.Errorf("the git dir of %s: %w", dir, err)
	}
	if err := ownCommon(ctx, dir, common); err != nil {
		return "", err
	}
	state := taskdir.CheckoutDir(common)
	if state == "" {
		return "", fmt.Errorf("no home directory to keep brood's records of the checkout %s in (set HOME or XDG_STATE_HOME)", dir)
	}
	return filepath.Join(state, "fleet", key), nil
}

// landedHere is whether tip is the tree this checkout last landed for
// the run key (its landing record, in the user's state directory, which
// no child writes where Landlock confines it: records.go), so was checked
// when it landed.
func (e *Engine) landedHere(ctx context.Context, key string, tip *codesnap.Snapshot) bool {
	if e.cfg.Code == nil || tip == nil {
		return false
	}
	dir, err := landDir(ctx, e.cfg.Code.Dir, key)
	if err != nil {
		return false
	}
	var rec landRecord
	if taskdir.ReadStateJSON(filepath.Join(dir, "landed.json"), maxRecord, &rec) != nil || rec.Landed == nil {
		return false
	}
	return rec.Landed.Tree == tip.Tree && rec.Landed.Base == tip.Base
}

// landStateDir is a directory of its own under dir for one landing's kept
// patch (concurrent landings never share one), named by the run's or the
// task's id (key's), so the path says whose patch it is; "" when dir is.
func landStateDir(dir, key string) (string, error) {
	if dir == "" {
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("keep the patch: %w", err)
	}
	id, _, _ := strings.Cut(key, "-")
	d, err := os.MkdirTemp(dir, id+"-")
	if err != nil {
		return "", fmt.Errorf("keep the patch: %w", err)
	}
	return d, nil
}

// landingEnd: a phase's end that the run's progress says before its
// writers' changes are in the submitter's tree (they land when the run
// ends). It is not passed on: "done" would be said of work that may then
// not apply; settledEvents says how the phase ended once it is known.
func landingEnd(ev wf.Event) bool {
	return ev.Landing > 0 && ev.Status != wf.RunRunning && ev.Status != "waiting"
}

// settledEvents passes on the end of every phase with a writer's change,
// after the landing: its calls done or not-applied, as the local engine's
// progress says them when each change applies or does not.
func settledEvents(res *wf.Result, events func(wf.Event)) {
	if res == nil || events == nil {
		return
	}
	for i := range res.Phases {
		ph := &res.Phases[i]
		if !slices.ContainsFunc(ph.Calls, func(c wf.CallRecord) bool { return len(c.Code) > 0 }) {
			continue
		}
		events(wf.Event{RunID: res.RunID, Phase: ph.ID, Shape: ph.Shape, Status: ph.Status, Counts: ph.Counts()})
	}
}

// landedJournal is journal with the landing's verdict after it: a call
// the run's landing made not-applied (its change kept: a conflict, a
// path the submitter's deny rules forbid) ends again with its record as
// the result now has it, as a local run's journal ends a writer whose
// change did not apply (the workflow's history, which the journal copies,
// ended it done, before its change came back here).
func landedJournal(res *wf.Result, journal []wf.JournalLine) []wf.JournalLine {
	last := map[string]*wf.CallRecord{}
	for _, l := range journal {
		if l.Type == "done" && l.Rec != nil {
			last[l.Key] = l.Rec
		}
	}
	out := journal
	for _, ph := range res.Phases {
		for i := range ph.Calls {
			c := &ph.Calls[i]
			if rec, ok := last[c.Key]; ok && c.Status == wf.CallNotApplied && rec.Status != wf.CallNotApplied {
				out = append(slices.Clip(out), wf.JournalLine{Type: "done", Key: c.Key, Rec: c})
			}
		}
	}
	return out
}

// callKept: this repository's landing of a call's change (its workflow
// run's) did not apply it and kept the patch, so the call, done on the
// fleet, is not-applied here, as its submitter said when it ended.
func (e *Engine) callKept(ctx context.Context, taskID, runID string) bool {
	rec, err := e.readLanded(ctx, callKey(taskID, runID))
	return err == nil && rec != nil && rec.Kept != "" && rec.Done == ""
}
