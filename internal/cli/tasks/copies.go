package tasks

import (
	"context"
	"fmt"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
)

// keptCopy is an isolated copy `tasks prune` left because it holds work
// that never reached the tree.
type keptCopy struct {
	TaskID string `json:"task_id"`
	Mode   string `json:"mode"`
	Path   string `json:"path"`
	Patch  string `json:"patch,omitempty"`
	Hint   string `json:"hint"`
}

// copyRepo is the tree a task's copy was made from: the parent's own
// record of the workspace, never the child-writable envelope.
func copyRepo(projectRoot string, t *dispatch.Task) string {
	if t.Owner != nil && t.Owner.Workspace != "" {
		return t.Owner.Workspace
	}
	return projectRoot
}

// copyHint says how to bring a kept copy's work back or drop it.
func copyHint(id string, c isolate.Copy) string {
	if c.Patch != "" {
		return fmt.Sprintf("Apply it with: git apply %s (or git apply --3way); drop it with: brood tasks prune --older-than 0s --force", c.Patch)
	}
	return fmt.Sprintf("It has no saved patch (the run never finished): look in it, continue it with brood tasks resume %s \"...\", or drop it with: brood tasks prune --older-than 0s --force", id)
}

// sweepCopies removes a finished task's leftover copies, except those that
// hold unapplied work (unless force), and returns what it removed and kept.
func sweepCopies(ctx context.Context, projectRoot string, t *dispatch.Task, force bool) (removed []string, kept []keptCopy, err error) {
	dir := copyRepo(projectRoot, t)
	copies, err := isolate.Leftovers(ctx, dir, t.ID, t.Files().Path())
	if err != nil {
		return nil, nil, nil // not a repository any more: nothing to sweep
	}
	for _, c := range copies {
		if c.Unapplied && !force {
			// Its work stays; what its writer's git left in the common
			// dir (a HEAD naming a commit only the copy's object
			// directory has) would make the user's git gc and fsck fail.
			if err := isolate.ForgetCopyGit(ctx, dir, c); err != nil {
				return removed, kept, fmt.Errorf("forget the git state of %s's copy %s: %w", t.ID, c.Path, err)
			}
			kept = append(kept, keptCopy{TaskID: t.ID, Mode: string(c.Mode), Path: c.Path, Patch: c.Patch, Hint: copyHint(t.ID, c)})
			continue
		}
		if err := isolate.RemoveCopy(ctx, dir, c); err != nil {
			return removed, kept, fmt.Errorf("remove %s's copy %s: %w", t.ID, c.Path, err)
		}
		removed = append(removed, c.Path)
	}
	return removed, kept, nil
}
