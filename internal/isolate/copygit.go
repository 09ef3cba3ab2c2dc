package isolate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/taskdir"
)

// A worktree copy's git directory (the common dir's worktrees/<name>) is
// its writer's to write (HoldGit): its HEAD, index and reflog may name
// commits and blobs that only the copy's own object directory holds. The
// landing puts it back (forgetChildGit); a parent that died before the
// landing leaves it as the writer made it, and git gc, fsck and rev-list
// --all in the user's repository stop on the missing objects for as long
// as the copy is there. ForgetCopyGit (brood tasks prune, RemoveCopy) and
// ForgetDeadCopies (a root's first isolated call) put such a copy's git
// directory back the same way; the copy's files, its work, stay.

// holdsChildGit reports whether a copy's git directory still holds what
// its writer made: HoldGit's object directory, which forgetChildGit
// removes.
func holdsChildGit(gitDir string) bool {
	_, err := os.Lstat(filepath.Join(gitDir, worktreeObjects))
	return err == nil
}

// ForgetCopyGit puts the git directory of the leftover worktree copy c of
// the repository containing dir back as git worktree add made it, when its
// writer's git state is still there: HEAD the commit the copy was made at
// (else the repository's HEAD), an index of that commit, and no log, ref
// or object of the writer's. An overlay copy has nothing to forget.
func ForgetCopyGit(ctx context.Context, dir string, c Copy) error {
	if c.Mode != ModeWorktree {
		return nil
	}
	r, err := openRepo(ctx, dir)
	if err != nil {
		return err
	}
	if !within(filepath.Join(r.common, "brood-worktrees"), c.Path) {
		return fmt.Errorf("isolate: %s is not a brood worktree", c.Path)
	}
	gd := r.copyGitDir(c.Path)
	if gd == "" || !holdsChildGit(gd) {
		return nil
	}
	return r.forgetCopyGit(ctx, gd)
}

// ForgetDeadCopies forgets the writer's git state (ForgetCopyGit) of every
// brood worktree copy of the repository at projectRoot whose task no
// process owns: its parent died before the landing. A copy of a task that
// is running (its task directory locked) is left alone, and so is one whose
// task this project does not hold: the copies are the repository's, and a
// root in another of its work trees (a linked git worktree, another project
// inside it) keeps its tasks in its own .brood. Its copies are that root's
// to forget (its next start, or brood tasks prune there). It returns the
// copies it put back. Without copies holding such state it costs a
// directory listing: no git runs.
func ForgetDeadCopies(ctx context.Context, projectRoot string) ([]string, error) {
	common := filepath.Join(projectRoot, ".git")
	if fi, err := os.Lstat(common); err != nil || !fi.IsDir() {
		r, err := openRepo(ctx, projectRoot)
		if err != nil {
			return nil, nil // not a repository: no copies
		}
		common = r.common
	}
	ents, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return nil, nil
	}
	var dead []string // their git directories
	for _, e := range ents {
		gd := filepath.Join(common, "worktrees", e.Name())
		if !holdsChildGit(gd) {
			continue
		}
		if wt := copyOf(common, gd); wt != "" && taskDead(projectRoot, filepath.Base(wt)) {
			dead = append(dead, gd)
		}
	}
	if len(dead) == 0 {
		return nil, nil
	}
	r, err := openRepo(ctx, projectRoot)
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, gd := range dead {
		if err := r.forgetCopyGit(ctx, gd); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, copyOf(common, gd))
	}
	return done, errors.Join(errs...)
}

// taskDead reports whether the task a copy is named for (<id>, or
// <id>-<run> after a resume) is one of projectRoot's and no process owns
// it: its directory found and not locked. A copy whose task cannot be
// found and judged is not dead (fail safe: a leftover copy only makes git
// fsck complain; a live one wiped breaks its running writer's git).
func taskDead(projectRoot, copyName string) bool {
	id, _, _ := strings.Cut(copyName, "-")
	if dispatch.CheckID(id) != nil {
		return false
	}
	td, err := taskdir.Open(projectRoot).Find(id)
	return err == nil && !dispatch.LockedDir(td)
}

// copyOf is the brood worktree copy whose git directory is gd, from the
// gitdir file git worktree add wrote there (held read-only for the copy's
// writer); "" when gd is not a brood copy's.
func copyOf(common, gd string) string {
	f, err := openRegular(filepath.Join(gd, "gitdir"))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	wt := filepath.Dir(strings.TrimSpace(string(b)))
	if filepath.Dir(wt) != filepath.Join(common, "brood-worktrees") {
		return ""
	}
	return wt
}

// copyGitDir is the git directory git keeps for the worktree copy at
// path ("" when it keeps none): found from the common dir's side, never
// from the copy's own .git file, which its writer writes.
func (r *repo) copyGitDir(path string) string {
	ents, _ := os.ReadDir(filepath.Join(r.common, "worktrees"))
	for _, e := range ents {
		gd := filepath.Join(r.common, "worktrees", e.Name())
		if copyOf(r.common, gd) == filepath.Clean(path) {
			return gd
		}
	}
	return ""
}

// forgetCopyGit puts the copy's git directory gd back: HEAD its start
// commit, an index of that commit, nothing else of its writer's.
func (r *repo) forgetCopyGit(ctx context.Context, gd string) error {
	start := r.copyStartOf(ctx, gd)
	if start == "" {
		return fmt.Errorf("isolate: no commit to put back as the HEAD of %s (the repository has none)", gd)
	}
	tmp, err := os.MkdirTemp("", "brood-forget-")
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	if _, err := r.git(ctx, []string{"GIT_INDEX_FILE=" + index}, "read-tree", start); err != nil {
		return fmt.Errorf("isolate: an index for %s: %w", gd, err)
	}
	b, err := os.ReadFile(index)
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	return resetCopyGit(gd, b, start)
}

// copyStartOf is the commit a copy was made at: the first entry of its
// HEAD's reflog (git worktree add's), when the user's object store has
// that commit (the writer can rewrite its reflog, not the store), else the
// repository's HEAD.
func (r *repo) copyStartOf(ctx context.Context, gd string) string {
	if f, err := openRegular(filepath.Join(gd, "logs", "HEAD")); err == nil {
		b, _ := io.ReadAll(io.LimitReader(f, 4096))
		f.Close()
		line, _, _ := strings.Cut(string(b), "\n")
		if fs := strings.Fields(line); len(fs) >= 2 && gitx.IsObjectID(fs[1]) {
			if _, err := r.git(ctx, nil, "cat-file", "-e", fs[1]+"^{commit}"); err == nil {
				return fs[1]
			}
		}
	}
	out, err := r.git(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// resetCopyGit empties the copy's git directory gd but for what is held
// for its writer (heldWorktreeGit), and writes index and HEAD anew. gd
// must be a directory, not a link to one (a writer in place without user
// namespaces can write the common dir), and everything is done beneath
// the directory it was when checked (os.Root): what the writer made in
// place of an entry (a symbolic link) is removed, never followed.
func resetCopyGit(gd string, index []byte, head string) error {
	fi, err := os.Lstat(gd)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("isolate: %s is not a copy's git directory (a link, or gone): left alone", gd)
	}
	root, err := os.OpenRoot(gd)
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	defer root.Close()
	if now, err := root.Stat("."); err != nil || !os.SameFile(fi, now) {
		return fmt.Errorf("isolate: %s changed while it was put back: left alone", gd)
	}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !slices.Contains(heldWorktreeGit(), e.Name()) {
			errs = append(errs, root.RemoveAll(e.Name()))
		}
	}
	errs = append(errs, writeNewIn(root, "index", index), writeNewIn(root, "HEAD", []byte(head+"\n")))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("isolate: put the copy's git directory back: %w", err)
	}
	return nil
}

// writeNewIn writes data to a file made anew at name beneath root (none
// may be there).
func writeNewIn(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
