package isolate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// A writer in a git worktree copy runs git there (add, mv, commit, reset)
// as a writer in place does: its copy's git directory (the common dir's
// worktrees/<id>, outside its copy) is writable to it, its index, HEAD,
// ORIG_HEAD, logs and per-worktree refs with it, but for what git reads as
// where the repository is and how it is configured (heldWorktreeGit),
// bound read-only over themselves in its own mount namespace. The objects
// it writes go to a directory of its own in that git directory
// (worktreeObjects), the common dir's objects its alternate: nothing of the
// user's repository (objects, refs, config, hooks, info) is writable to it,
// so a branch or a stash of its own (refs of the common dir) is refused.
// Its landing reads neither its index nor its HEAD: the copy's files are
// added to an index the parent copied when it made the copy
// (Workspace.landIndex), so a commit comes back as the same patch as the
// uncommitted change.

// heldWorktreeGit are the entries of a worktree's git directory that say
// where its repository is (commondir), which tree it is (gitdir, read by
// git worktree list, prune and remove) and more configuration
// (config.worktree): held read-only for a writer that writes the rest.
func heldWorktreeGit() []string { return []string{"commondir", "gitdir", "config.worktree"} }

// worktreeObjects is the directory of a worktree's git directory where
// its writer's git writes objects (GIT_OBJECT_DIRECTORY).
const worktreeObjects = "objects"

// HoldGit lets the worktree copy's writer write its copy's git directory,
// with heldWorktreeGit held read-only in its own user and mount namespace.
// Call it before Configure, where the machine has user namespaces and
// Landlock and this process may mount (the root dispatcher). Without it
// the writer's git directory stays unwritable to it (git add and commit
// fail there). It does nothing for another mode.
func (w *Workspace) HoldGit() error {
	if w.Mode != ModeWorktree || w.gitDir == "" {
		return nil
	}
	// A mount needs a file to cover: config.worktree, absent, is made
	// empty (git reads it only under extensions.worktreeConfig, and then
	// as no setting).
	for _, e := range heldWorktreeGit() {
		p := filepath.Join(w.gitDir, e)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return fmt.Errorf("isolate: make %s to hold it: %w", p, err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(w.gitDir, worktreeObjects), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("isolate: %w", err)
	}
	w.gitHeld = true
	return nil
}

// configureHeldGit adds to a worktree writer's command its namespaces, the
// entries its EnterFromEnv holds read-only and where its git writes
// objects.
func (w *Workspace) configureHeldGit(cmd *exec.Cmd, spec *mountSpec) error {
	if !w.gitHeld {
		return nil
	}
	if err := addMountNamespace(cmd); err != nil {
		return err
	}
	for _, e := range heldWorktreeGit() {
		spec.RO = append(spec.RO, filepath.Join(w.gitDir, e))
	}
	cmd.Env = append(cmd.Env, "GIT_OBJECT_DIRECTORY="+filepath.Join(w.gitDir, worktreeObjects),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(w.repo.common, "objects"))
	return nil
}

// GitWritable is what a worktree copy's writer writes beside its copy: its
// git directory, where HoldGit holds its configuration (none otherwise).
func (w *Workspace) GitWritable() []string {
	if w == nil || w.Mode != ModeWorktree || !w.gitHeld {
		return nil
	}
	return []string{w.gitDir}
}

// saveLandIndex copies the index git worktree add wrote for the copy to a
// file of the parent's own, out of every child's reach (its temporary
// directory), before the child starts: the landing adds the copy's files
// to it, with the stat data git took at checkout (only what changed is
// hashed again), whatever the child made of its own index.
func (w *Workspace) saveLandIndex() error {
	src, err := os.Open(filepath.Join(w.gitDir, "index"))
	if err != nil {
		return fmt.Errorf("isolate: the copy's index: %w", err)
	}
	defer src.Close()
	dst, err := os.CreateTemp("", "brood-land-*.index")
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst.Name())
		return fmt.Errorf("isolate: copy the copy's index: %w", err)
	}
	w.landIndex = dst.Name()
	return nil
}

// landGit runs git on the child's worktree copy for its landing: the
// common git dir (never the copy's git dir, which its writer writes), the
// copy as the work tree, the parent's own index (landIndex), and no hook,
// fsmonitor or other configured command of the repository, nor any filter
// (the copy's .gitattributes are the child's: gitIn).
func (w *Workspace) landGit(ctx context.Context, args ...string) (string, error) {
	if w.landIndex == "" {
		if w.gitHeld {
			// Its writer wrote the copy's git dir, index included: never
			// read for a landing (a crafted index's stat data would have
			// add -A keep what the child chose).
			return "", errors.New("isolate: the worktree copy's own index was not copied before its writer ran: nothing landed from it")
		}
		return w.childGit(ctx, args...)
	}
	env := []string{"GIT_DIR=" + w.repo.common, "GIT_WORK_TREE=" + w.Root, "GIT_INDEX_FILE=" + w.landIndex}
	safe := []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.sshCommand=false", "-c", "diff.external="}
	return w.repo.gitIn(ctx, w.Root, env, nil, append(safe, args...)...)
}

// forgetChildGit puts the copy's git directory back as git worktree add
// made it, once its writer has ended (the landing has added the copy to
// landIndex): HEAD the copy's start, the index the parent's, and no log,
// ref or object of the child's. Its commits' objects are in a directory
// of its own (worktreeObjects), which no git of the user's reads: left
// named by the copy's HEAD, index or reflog, they would make the user's
// git gc, fsck and rev-list --all fail on a missing object while the copy
// is there (a copy kept after a conflict too). What its writer made in
// place of HEAD or index (a symbolic link) is removed, never followed.
func (w *Workspace) forgetChildGit() error {
	if !w.gitHeld || w.landIndex == "" {
		return nil
	}
	index, err := os.ReadFile(w.landIndex)
	if err != nil {
		return fmt.Errorf("isolate: put the copy's git directory back: %w", err)
	}
	return resetCopyGit(w.gitDir, index, w.copyStart)
}
