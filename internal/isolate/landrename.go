package isolate

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// applyByRename lands patch in the tree the way `git apply` would, but
// never leaves a path it replaces missing, not for a moment. `git apply`
// on the work tree unlinks each file it changes and creates it again; an
// overlay child whose lower layer is this tree and that looks the name up
// in between keeps a negative entry for it (overlayfs does not look at
// its lower layer again), and the file is missing to it for the rest of
// its run (TestLandingUnderARunningOverlayChild). So git works on a
// private index instead: the current versions of the patch's paths are
// added to it, the patch is applied to it (`git apply --cached`: the same
// check, in git's own form, with the same conversions), its result is
// checked out into a private directory, and each file is then moved into
// the tree by rename over the old one (deletions first, as git does).
// A refusal is a *GitError, as git apply's; nothing was written then.
func (w *Workspace) applyByRename(ctx context.Context, base string, patch []byte, pre *preimages) error {
	scratch, err := landingScratch(os.TempDir(), []string{w.repo.top, w.repo.gitDir, w.repo.common}, cmp.Or(w.keepDir, w.state))
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(scratch, "index")}
	seeded, err := w.seedAttrs(ctx, env, base, pre)
	if err != nil {
		return err
	}
	var have bytes.Buffer
	for _, pi := range pre.paths {
		if pi.kind == 'f' || pi.kind == 'l' {
			have.WriteString(pi.rel + "\x00")
		}
	}
	if have.Len() > 0 {
		if _, err := w.repo.gitIn(ctx, w.repo.top, env, have.Bytes(), "update-index", "--add", "-z", "--stdin"); err != nil {
			return err
		}
	}
	if _, err := w.repo.gitIn(ctx, w.repo.top, env, patch, "apply", "--cached", "--whitespace=nowarn"); err != nil {
		return err
	}
	// The private index holds the patch's paths only: all of it is the
	// result, and what is not in it was deleted.
	stage := filepath.Join(scratch, "tree")
	// Only the filters the HEAD commit's .gitattributes name write the
	// result (gitIn), whatever .gitattributes the patch brings, as only
	// they hashed what the child wrote; which path they write is the base
	// snapshot's .gitattributes' say (seedAttrs), or the patch's own.
	// git reads the attributes from the work tree before the index, for a
	// checkout-index too: where the index was seeded, an empty work tree
	// leaves them the index's.
	coDir, coEnv := w.repo.top, env
	if seeded {
		coDir = filepath.Join(scratch, "attrs")
		if err := os.Mkdir(coDir, 0o700); err != nil {
			return fmt.Errorf("isolate: %w", err)
		}
		coEnv = append([]string{"GIT_DIR=" + w.repo.gitDir, "GIT_WORK_TREE=" + coDir}, env...)
	}
	if _, err := w.repo.gitIn(ctx, coDir, coEnv, nil, "checkout-index", "-a", "-f", "--prefix="+stage+"/"); err != nil {
		return err
	}
	st, err := os.OpenRoot(stage)
	if errors.Is(err, fs.ErrNotExist) {
		st, err = emptyRoot(scratch) // the patch deletes every path it names
	}
	if err != nil {
		return fmt.Errorf("isolate: open the landing's checkout: %w", err)
	}
	defer st.Close()
	result := map[string]bool{}
	for _, pi := range pre.paths {
		fi, err := st.Lstat(filepath.FromSlash(pi.rel))
		if err != nil {
			continue
		}
		if fi.IsDir() {
			// The directory of other paths (a file the patch turned into
			// one), or, empty, a submodule's (a gitlink).
			if ents, err := fs.ReadDir(st.FS(), pi.rel); err != nil || len(ents) == 0 {
				return &GitError{Args: []string{"apply"}, Stderr: "error: the patch makes " + pi.rel + " a submodule, which brood does not land"}
			}
			continue
		}
		result[pi.rel] = true
		if beyondLink(w.repo.top, pi.rel) {
			return &GitError{Args: []string{"apply"}, Stderr: "error: affected file '" + pi.rel + "' is beyond a symbolic link"}
		}
	}
	return installResult(w.repo.top, st, pre, result)
}

// seedAttrs puts the base snapshot's .gitattributes (but those the patch
// names: theirs are its own versions) into the landing's private index,
// which its checkout-index reads them from: the child's files are
// written with the attributes they were hashed with (overlayPatch; a
// worktree copy's are the tree's at spawn, the same), not with the
// tree's now. With no user filter kept (no filter runs on them either
// way) it does nothing and reports false: the checkout then reads the
// tree's, as the overlay's hashing then seeds none (no walk of the base
// for them on a landing).
func (w *Workspace) seedAttrs(ctx context.Context, env []string, base string, pre *preimages) (bool, error) {
	if base == "" || w.repo.keptFilters(ctx) == nil {
		return false, nil
	}
	attrs, err := w.repo.attrsIn(ctx, base)
	if err != nil {
		return false, fmt.Errorf("isolate: the base's .gitattributes: %w", err)
	}
	named := map[string]bool{}
	for _, pi := range pre.paths {
		named[pi.rel] = true
	}
	info := attrsInfo(attrs, func(p string) bool { return named[p] })
	if len(info) == 0 {
		return true, nil
	}
	_, err = w.repo.gitIn(ctx, w.repo.top, env, info, "update-index", "-z", "--index-info")
	return err == nil, err
}

// landingScratch makes a new directory (0700) for a landing's private
// index and checkout, in this process's own temporary directory tmp: out
// of every child's reach (their TMPDIR is their task's; the host's are
// hidden from them), as the copy of a worktree copy's index is
// (saveLandIndex). Never under the tree or its git directories (reach),
// which a writer in place can write: git follows a link planted at the
// checkout's prefix. A tmp beneath one of them (TMPDIR=$PWD/tmp) is
// refused for records, the parent's own directory that no child can write.
func landingScratch(tmp string, reach []string, records string) (string, error) {
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	for _, r := range reach {
		if real, err := filepath.EvalSymlinks(r); err == nil && (tmp == real || strings.HasPrefix(tmp, real+string(filepath.Separator))) {
			tmp = filepath.Join(records, "landing")
			if err := os.MkdirAll(tmp, 0o700); err != nil {
				return "", fmt.Errorf("isolate: TMPDIR is inside the tree, and the landing's scratch under %s could not be made: %w", records, err)
			}
			break
		}
	}
	d, err := os.MkdirTemp(tmp, "brood-landing-")
	if err != nil {
		return "", fmt.Errorf("isolate: make a scratch directory for the landing: %w", err)
	}
	return d, nil
}

// installResult makes the tree at top hold what the private index's
// checkout in stage holds for each path of pre: a path the result has is
// written beside its place and renamed over it; one it has not is
// removed, with the directories that leaves empty. All of it beneath top,
// no link followed out of it (os.Root).
func installResult(top string, stage *os.Root, pre *preimages, result map[string]bool) error {
	root, err := os.OpenRoot(top)
	if err != nil {
		return fmt.Errorf("isolate: open the tree: %w", err)
	}
	defer root.Close()
	for _, pi := range pre.paths {
		if _, keep := result[pi.rel]; keep || (pi.kind != 'f' && pi.kind != 'l') {
			continue
		}
		if err := root.Remove(filepath.FromSlash(pi.rel)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("isolate: remove %s: %w", pi.rel, err)
		}
		for d := filepath.Dir(filepath.FromSlash(pi.rel)); d != "." && root.Remove(d) == nil; d = filepath.Dir(d) {
		}
	}
	for i, pi := range pre.paths {
		if _, ok := result[pi.rel]; !ok {
			continue
		}
		if err := installOne(root, stage, filepath.FromSlash(pi.rel), i); err != nil {
			return fmt.Errorf("isolate: write %s: %w", pi.rel, err)
		}
	}
	return nil
}

// installOne puts the staged file at rel (in stage, read with no link
// followed out of it) at rel under root: a new file (or link) beside rel,
// renamed over it.
func installOne(root, stage *os.Root, rel string, n int) error {
	fi, err := stage.Lstat(rel)
	if err != nil {
		return err
	}
	if err := root.MkdirAll(filepath.Dir(rel), 0o777); err != nil {
		return err
	}
	// A name no file has: made anew (O_EXCL, or a link's EEXIST), never
	// removed first, so a file of the user's of that name stays.
	tmp := rel + ".brood-land-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(n) + "-" + rand.Text()[:10]
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := stage.Readlink(rel)
		if err == nil {
			err = root.Symlink(target, tmp)
		}
		if err != nil {
			return err
		}
		return renameIn(root, tmp, rel)
	}
	in, err := stage.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("the landing's checkout of it is not a regular file")
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(f, in)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return renameIn(root, tmp, rel)
}

func renameIn(root *os.Root, tmp, dst string) error {
	if err := root.Rename(tmp, dst); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// emptyRoot is an empty directory made in scratch, opened: the checkout
// of a result with no file in it.
func emptyRoot(scratch string) (*os.Root, error) {
	d := filepath.Join(scratch, "empty")
	if err := os.Mkdir(d, 0o700); err != nil {
		return nil, err
	}
	return os.OpenRoot(d)
}
