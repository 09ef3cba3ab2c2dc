package codesnap

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
)

// Result takes the copy's change against the snapshot tree — every file the
// child wrote, added or removed, modes and symlinks included, ignored files
// (by the tree's .gitignore files and the submitter's excludes) left out —
// and puts the patch in store. It reads the work tree only through brood's
// own git dir and index: whatever the child did to its .git is ignored. It
// may be called while the child runs (a partial patch for a heartbeat) and
// again at the end; calls must not overlap.
func (co *Checkout) Result(ctx context.Context, store *blobstore.Store) (*Result, error) {
	if co.shared {
		return &Result{Tree: co.snap.Tree}, nil // a read-only call's: it wrote nothing
	}
	if co.Mount != nil {
		return co.overlayResult(ctx, store)
	}
	index := filepath.Join(co.job, "result.index")
	data, err := os.ReadFile(co.index)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	if err := os.WriteFile(index, data, 0o600); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	defer os.Remove(index)
	g := co.metaGit(index)
	if _, err := g.run(ctx, "add", "-A"); err != nil {
		return nil, fmt.Errorf("codesnap: read the copy's changes: %w", err)
	}
	tree, err := g.line(ctx, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	return co.patchOf(ctx, store, g, tree)
}

// patchOf is the change from the snapshot's tree to tree, its patch put in
// store.
func (co *Checkout) patchOf(ctx context.Context, store *blobstore.Store, g gitCmd, tree string) (*Result, error) {
	res := &Result{Tree: co.snap.Tree}
	if tree == co.snap.Tree {
		return res, nil
	}
	names, err := g.run(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-renames", co.snap.Tree, tree)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	for _, n := range strings.Split(names, "\x00") {
		if n != "" {
			res.Files = append(res.Files, n)
		}
	}
	patch, err := g.run(ctx, append(append([]string{"diff-tree", "-r", "-p"}, diffFlags...), co.snap.Tree, tree)...)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	ref, err := store.PutBytes(ctx, []byte(patch))
	if err != nil {
		return nil, fmt.Errorf("codesnap: store the result patch: %w", err)
	}
	res.Patch = &ref
	return res, nil
}

// applyPartial puts an earlier attempt's change into a fresh copy.
func (co *Checkout) applyPartial(ctx context.Context, store *blobstore.Store, p *Result) error {
	if p.Tree != co.snap.Tree {
		return fmt.Errorf("codesnap: the partial patch is against tree %s, not this snapshot's %s", short(p.Tree), short(co.snap.Tree))
	}
	file := filepath.Join(co.job, "partial.patch")
	if err := store.GetFile(ctx, *p.Patch, file); err != nil {
		return fmt.Errorf("codesnap: the partial patch: %w", err)
	}
	g := co.metaGit("")
	if _, err := g.run(ctx, "apply", "--whitespace=nowarn", file); err != nil {
		return fmt.Errorf("codesnap: the partial patch does not apply to the snapshot: %w", err)
	}
	return nil
}

// Cleanup removes the copy, even where the child took away its write
// permissions. The cache stays.
func (co *Checkout) Cleanup() error {
	if co.job == "" {
		return nil
	}
	if co.lock != nil {
		defer co.lock.Close()
	}
	if co.treeLock != nil {
		// After the copy is gone: the base checkout may be pruned then.
		defer co.treeLock.Close()
	}
	if err := removeAll(co.job); err != nil {
		return fmt.Errorf("codesnap: remove the copy: %w", err)
	}
	return nil
}

// removeAll removes dir, even where a child (or the kernel, an overlay's
// work directory) took away write permission from a directory in it.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
