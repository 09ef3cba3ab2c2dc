package codesnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/gitx"
)

// The dirty state travels as one git pack: the blobs and trees of the
// submitter's tree (base + dirty state, Snapshot.DirtyTree) that the base's
// tree lacks, in one file in the store. A worker indexes it into its
// clone's objects once (git index-pack --strict: every object is hashed
// to its name and checked well-formed, a tree entry named .git refused)
// and reads the tree with read-tree: no file is patched, no object is
// written loose, and the copy is DirtyTree by construction — object ids
// are content hashes — checked all the same against the snapshot's Tree
// once its layers are on.

// storePack stores the objects of tree that base (a commit; "" for none)
// lacks as one pack, and returns its reference (nil: no object to ship).
//
// The objects left out are those of base's tree, named as a tree: given
// the commit, rev-list --objects leaves out nothing under a bare tree
// (it marks a negative commit's tree only as it walks commits, and there
// are none to walk), so the pack held every blob of the base as well
// (20,122 objects for 11,032 dirty ones in issue 26's tree), each indexed
// again by every worker and compared with its own copy.
func storePack(ctx context.Context, store *blobstore.Store, g gitCmd, base, tree string) (*blobstore.Ref, error) {
	args := []string{"rev-list", "--objects", tree}
	if base != "" {
		args = append(args, "--not", base+"^{tree}")
	}
	objs, err := g.run(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("codesnap: list the dirty objects: %w", err)
	}
	if strings.TrimSpace(objs) == "" {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "brood-pack-")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(tmp)
	g.stdin = []byte(objs)
	// No delta search: the pack is read once per worker from a store
	// nearby, and deltas cost the submitter CPU for a smaller file.
	name, err := g.line(ctx, "pack-objects", "-q", "--window=0", "--no-reuse-delta", filepath.Join(tmp, "dirty"))
	if err != nil {
		return nil, fmt.Errorf("codesnap: pack the dirty state: %w", err)
	}
	ref, err := store.PutFile(ctx, filepath.Join(tmp, "dirty-"+name+".pack"))
	if err != nil {
		return nil, fmt.Errorf("codesnap: store the dirty state: %w", err)
	}
	return &ref, nil
}

// indexPack puts snap's pack into gitDir's objects (objects/pack), unless
// gitDir has its dirty tree already. The pack comes from the store (which
// checks its digest) and git index-pack --strict checks every object.
func indexPack(ctx context.Context, store *blobstore.Store, gitDir, scratch string, snap *Snapshot) error {
	g := gitCmd{dir: scratch, env: []string{"GIT_DIR=" + gitDir}}
	if _, err := g.run(ctx, "cat-file", "-e", snap.DirtyTree+"^{tree}"); err == nil {
		return nil
	}
	file := filepath.Join(scratch, "dirty-"+snap.Pack.SHA256[:16]+".pack")
	defer os.Remove(file)
	if err := store.GetFile(ctx, *snap.Pack, file); err != nil {
		return fmt.Errorf("codesnap: the dirty state's pack: %w", err)
	}
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer f.Close()
	c := gitx.Cmd{Dir: scratch, Env: g.env, Stdin: f}
	if _, err := c.Run(ctx, "index-pack", "--stdin", "--strict"); err != nil {
		return fmt.Errorf("codesnap: the dirty state's pack is refused: %w", err)
	}
	if _, err := g.run(ctx, "cat-file", "-e", snap.DirtyTree+"^{tree}"); err != nil {
		return fmt.Errorf("codesnap: the dirty state's pack lacks its tree %s", short(snap.DirtyTree))
	}
	return nil
}

// readRoot puts snap's root — base + dirty state, before any layer — in
// the index g names: the dirty tree from the pack (indexed into gitDir,
// whose objects g reads), or the base with the dirty patch applied.
func readRoot(ctx context.Context, store *blobstore.Store, g gitCmd, gitDir, scratch string, snap *Snapshot) error {
	if snap.Pack != nil {
		if err := indexPack(ctx, store, gitDir, scratch, snap); err != nil {
			return err
		}
		if _, err := g.run(ctx, "read-tree", snap.DirtyTree); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
		return nil
	}
	args := []string{"read-tree", "--empty"}
	if snap.Base != "" {
		args = []string{"read-tree", snap.Base}
	}
	if _, err := g.run(ctx, args...); err != nil {
		return fmt.Errorf("codesnap: the run's base %s: %w", short(snap.Base), err)
	}
	if snap.Patch == nil {
		return nil
	}
	return applyPatches(ctx, store, g, scratch, []*blobstore.Ref{snap.Patch}, true, "base "+short(snap.Base))
}

// readTree is readRoot with the run's layers applied: snap's Tree in the
// index g names.
func readTree(ctx context.Context, store *blobstore.Store, g gitCmd, gitDir, scratch string, snap *Snapshot) error {
	if err := readRoot(ctx, store, g, gitDir, scratch, snap); err != nil {
		return err
	}
	return applyPatches(ctx, store, g, scratch, snap.Layers, false, "the submitter's tree")
}

// dirty says the snapshot carries a dirty state (pack or patch).
func (s *Snapshot) dirty() bool { return s.Pack != nil || s.Patch != nil }
