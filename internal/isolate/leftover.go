package isolate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Copy is an isolated child's copy left on disk after its run: a kept
// worktree, or an overlay's upper layer in the task's state directory.
type Copy struct {
	// Mode is worktree or overlay.
	Mode Mode `json:"mode"`
	// Path is the copy: the worktree, or the overlay's upper directory.
	Path string `json:"path"`
	// Patch is the saved patch of the copy's changes, "" when the child
	// never got as far as Finish (killed, or its parent crashed).
	Patch string `json:"patch,omitempty"`
	// Unapplied is true when the copy may hold work that is not in the
	// tree: its patch does not reverse-apply on the tree, or there is no
	// patch to tell.
	Unapplied bool `json:"unapplied"`
}

// Leftovers lists the copies task id left behind. Paths are derived from
// the repository containing dir and from stateDir (the task's directory),
// never read from anything the child wrote; id must be a checked task id.
// A resumed task's earlier copies (<id>-<n>, isolate.<n>) are included.
func Leftovers(ctx context.Context, dir, id, stateDir string) ([]Copy, error) {
	if id == "" || strings.ContainsAny(id, "/\\.") {
		return nil, fmt.Errorf("isolate: invalid id %q", id)
	}
	var out []Copy
	var r *repo
	states, _ := filepath.Glob(filepath.Join(stateDir, "isolate*"))
	if len(states) == 0 {
		return nil, nil // Prepare makes the state before any copy
	}
	if rr, err := openRepo(ctx, dir); err == nil {
		r = rr
	} else if !errors.Is(err, errNotRepo) {
		return nil, err
	}
	// Run 0's copy is <id> with state isolate; each resume renames the
	// last state to isolate.<n> (n = its run) and copies anew as <id>-<run>.
	earlier := len(states) - 1
	patchOf := map[string]string{} // worktree name -> patch
	for _, s := range states {
		n := strings.TrimPrefix(strings.TrimPrefix(filepath.Base(s), "isolate"), ".")
		if n == "" {
			n = fmt.Sprint(earlier)
		}
		name := id + "-" + n
		if n == "0" {
			name = id
		}
		patch := filepath.Join(s, "changes.patch")
		if st, err := os.Lstat(patch); err != nil || !st.Mode().IsRegular() {
			patch = ""
		}
		patchOf[name] = patch
		up := filepath.Join(s, "upper")
		if st, err := os.Lstat(up); err == nil && st.IsDir() {
			out = append(out, Copy{Mode: ModeOverlay, Path: up, Patch: patch})
		}
	}
	if r != nil {
		wts, _ := filepath.Glob(filepath.Join(r.common, "brood-worktrees", id))
		more, _ := filepath.Glob(filepath.Join(r.common, "brood-worktrees", id+"-*"))
		for _, wt := range append(wts, more...) {
			if st, err := os.Lstat(wt); err != nil || !st.IsDir() {
				continue
			}
			out = append(out, Copy{Mode: ModeWorktree, Path: wt, Patch: patchOf[filepath.Base(wt)]})
		}
	}
	for i := range out {
		out[i].Unapplied = unapplied(ctx, r, out[i])
	}
	return out, nil
}

// unapplied reports whether c may hold work the tree lacks: true unless its
// patch is empty or is already in the tree (it reverse-applies cleanly,
// e.g. after the user ran git apply on it). An overlay upper holding
// nothing but the whiteouts of ignored files holds no work.
func unapplied(ctx context.Context, r *repo, c Copy) bool {
	if c.Patch == "" {
		if c.Mode == ModeOverlay {
			set, err := ReadUpper(c.Path)
			return err != nil || len(set.Set) > 0 || len(set.Opaque) > 0
		}
		return true
	}
	st, err := os.Stat(c.Patch)
	if err != nil {
		return true
	}
	if st.Size() == 0 {
		return false
	}
	if r == nil {
		return true
	}
	_, err = r.git(ctx, nil, "apply", "--reverse", "--check", "--whitespace=nowarn", c.Patch)
	return err != nil
}

// RemoveCopy deletes a leftover copy: a worktree with `git worktree remove`
// (and prune, for one git no longer knows), an overlay upper directory with
// its whole state directory. It never follows a link inside the copy.
func RemoveCopy(ctx context.Context, dir string, c Copy) error {
	switch c.Mode {
	case ModeWorktree:
		r, err := openRepo(ctx, dir)
		if err != nil {
			return err
		}
		if !within(filepath.Join(r.common, "brood-worktrees"), c.Path) {
			return fmt.Errorf("isolate: %s is not a brood worktree", c.Path)
		}
		// Its writer's git state first: should the removal fail, the
		// user's git gc and fsck still find no object missing.
		var forgetErr error
		if gd := r.copyGitDir(c.Path); gd != "" && holdsChildGit(gd) {
			forgetErr = r.forgetCopyGit(ctx, gd)
		}
		_, rmErr := r.worktree(ctx, "remove", "--force", "--force", c.Path)
		if rmErr != nil {
			rmErr = errors.Join(rmErr, forgetErr)
		}
		if _, err := os.Lstat(c.Path); err == nil {
			if err := os.RemoveAll(c.Path); err != nil {
				return errors.Join(rmErr, err)
			}
		}
		_, err = r.worktree(ctx, "prune")
		return err
	case ModeOverlay:
		return os.RemoveAll(filepath.Dir(c.Path))
	}
	return fmt.Errorf("isolate: unknown copy mode %q", c.Mode)
}
