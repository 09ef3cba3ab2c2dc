package codesnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
)

// Land brings the change from one snapshot of a run's tree to a later one
// (a fleet plan's chain: what the submitter landed before, and the chain's
// tip) into the submitter's tree at dir: whole or not at all, the way Apply
// brings one call's back. from and to share their base; both trees are
// rebuilt in the submitter's repository when it lacks them.
func Land(ctx context.Context, store *blobstore.Store, dir string, from, to *Snapshot, opts ApplyOptions) (*Applied, error) {
	res, err := delta(ctx, store, dir, from, to)
	if err != nil || res == nil {
		return &Applied{}, err
	}
	return ApplyWith(ctx, store, dir, from, res, opts)
}

// Landed reports whether the change from → to is in dir's work tree
// already (it applies in reverse, every hunk): a landing that was
// interrupted after git wrote it but before it was recorded.
func Landed(ctx context.Context, store *blobstore.Store, dir string, from, to *Snapshot) (bool, error) {
	res, err := delta(ctx, store, dir, from, to)
	if err != nil || res == nil {
		return res == nil && err == nil, err
	}
	return InTree(ctx, store, dir, res)
}

// InTree reports whether res (a change against a snapshot's tree: one
// call's, or a run's delta) is in dir's work tree already: its patch
// applies in reverse, every hunk. No patch is nothing to land: true.
func InTree(ctx context.Context, store *blobstore.Store, dir string, res *Result) (bool, error) {
	if res == nil || res.Patch == nil {
		return true, nil
	}
	if err := CheckPatchSize(*res.Patch); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp("", "brood-landed-")
	if err != nil {
		return false, fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "change.patch")
	if err := store.GetFile(ctx, *res.Patch, file); err != nil {
		return false, fmt.Errorf("codesnap: %w", err)
	}
	top, err := gitCmd{dir: dir}.line(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return false, fmt.Errorf("codesnap: %s: %w", dir, err)
	}
	_, err = gitCmd{dir: top}.run(ctx, "apply", "--check", "-R", "--whitespace=nowarn", file)
	return err == nil, nil
}

// delta is the change from → to as a Result against from's tree (nil: the
// trees are the same).
func delta(ctx context.Context, store *blobstore.Store, dir string, from, to *Snapshot) (*Result, error) {
	if from == nil || to == nil || from.Tree == to.Tree {
		return nil, nil
	}
	if from.Base != to.Base {
		return nil, fmt.Errorf("codesnap: the run's trees have different bases (%s, %s)", short(from.Base), short(to.Base))
	}
	g := gitCmd{dir: dir}
	top, err := g.line(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %s: %w", dir, err)
	}
	g.dir = top
	for _, s := range []*Snapshot{from, to} {
		if err := ensureTree(ctx, store, g, s); err != nil {
			return nil, err
		}
	}
	names, err := g.run(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-renames", from.Tree, to.Tree)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	res := &Result{Tree: from.Tree}
	for _, n := range strings.Split(names, "\x00") {
		if n != "" {
			res.Files = append(res.Files, n)
		}
	}
	patch, err := g.run(ctx, append(append([]string{"diff-tree", "-r", "-p"}, diffFlags...), from.Tree, to.Tree)...)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	ref, err := store.PutBytes(ctx, []byte(patch))
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	res.Patch = &ref
	return res, nil
}

// Delta is the change from → to as a Result against from's tree, its
// patch put in store (nil: the trees are the same): a refused run's tree
// kept for the user to read.
func Delta(ctx context.Context, store *blobstore.Store, dir string, from, to *Snapshot) (*Result, error) {
	return delta(ctx, store, dir, from, to)
}
