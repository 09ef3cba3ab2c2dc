package temporal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// landRecord is what a repository knows of a fleet run's changes: which of
// the run's trees its work tree has, so every submitter of the run — the
// first, or a resume after it died — lands exactly what is not in it yet,
// and nothing twice. It is kept in the repository's git dir
// (brood/fleet/RUN_ID/landed.json), outside the work tree that snapshots
// capture.
type landRecord struct {
	RunID string `json:"run_id"`
	// Landed is the run's tree as last brought into the work tree (nil:
	// none yet; the submit snapshot is what the tree had).
	Landed *codesnap.Snapshot `json:"landed,omitempty"`
	// Landing is a landing begun and not recorded as ended: a submitter
	// that died in between (it is checked against the work tree).
	Landing *codesnap.Snapshot `json:"landing,omitempty"`
	// Kept is a tree whose change did not apply (kept for the user, not
	// tried again), and Message what was said last.
	Kept    string `json:"kept,omitempty"`
	Message string `json:"message,omitempty"`
}

// landRun lands a plan's tree in the submitter's: the change from what
// this repository has of the run (the submit snapshot at first) to the
// run's tip, whole or not at all, the way a local isolated writer's change
// comes back. It says what happened (the run's landed).
func (e *Engine) landRun(ctx context.Context, in RunInput) string {
	if in.Code == nil || in.Tip == nil || in.Tip.Tree == in.Code.Tree {
		return ""
	}
	if e.cfg.Code == nil {
		return "the run's changes are on the fleet, not here: resume it from the repository it was submitted from to land them"
	}
	ctx = context.WithoutCancel(ctx)
	dir, err := landDir(ctx, e.cfg.Code.Dir, in.RunID)
	if err != nil {
		return "the run's changes were not landed: " + err.Error()
	}
	unlock, err := dispatch.LockTask(dir)
	if errors.Is(err, dispatch.ErrTaskBusy) {
		return "another brood is landing this run's changes in this repository now"
	} else if err != nil {
		return "the run's changes were not landed: " + err.Error()
	}
	defer unlock()
	file := filepath.Join(dir, "landed.json")
	var rec landRecord
	if err := dispatch.ReadJSON(file, &rec); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "the run's changes were not landed: its record " + file + " is unreadable: " + err.Error()
	}
	rec.RunID = in.RunID
	from, to := in.Code, in.Tip
	if rec.Landed != nil {
		from = rec.Landed
	}
	switch {
	case from.Tree == to.Tree:
		return alreadyLanded
	case rec.Kept == to.Tree:
		return rec.Message
	}
	blobs, opts := e.cfg.Code.Blobs, codesnap.ApplyOptions{StateDir: e.cfg.Code.StateDir, AllowConfig: e.cfg.Code.AllowConfig}
	if rec.Landing != nil && rec.Landing.Tree == to.Tree {
		if ok, _ := codesnap.Landed(ctx, blobs, e.cfg.Code.Dir, from, to); ok {
			rec.Landed, rec.Landing = to, nil
			rec.Message = "fleet: the run's changes are in your tree (landed before its submitter stopped)"
			return saveLanded(file, &rec)
		}
	}
	rec.Landing = to
	if err := dispatch.WriteJSON(file, &rec); err != nil {
		return "the run's changes were not landed: " + err.Error()
	}
	ap, err := codesnap.Land(ctx, blobs, e.cfg.Code.Dir, from, to, opts)
	rec.Landing = nil
	switch {
	case err != nil:
		rec.Message = "fleet: bringing the run's changes back failed (nothing was applied): " + err.Error()
	case ap.Conflict != "":
		rec.Kept, rec.Message = to.Tree, "fleet: "+ap.Message()
	default:
		rec.Landed, rec.Message = to, "fleet: "+ap.Message()
	}
	return saveLanded(file, &rec)
}

// alreadyLanded is landRun's word for a run whose tree this repository has.
const alreadyLanded = "fleet: the run's changes are in your tree already"

func saveLanded(file string, rec *landRecord) string {
	if err := dispatch.WriteJSON(file, rec); err != nil {
		return rec.Message + " (its record was not saved: " + err.Error() + ")"
	}
	return rec.Message
}

// landDir is the run's record directory in the git dir of the repository
// holding dir.
func landDir(ctx context.Context, dir, runID string) (string, error) {
	if err := dispatch.CheckID(runID); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--path-format=absolute", "--git-common-dir")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s is not in a git repository: %w", dir, err)
	}
	d := filepath.Join(strings.TrimSpace(string(out)), "brood", "fleet", runID)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	return d, nil
}
