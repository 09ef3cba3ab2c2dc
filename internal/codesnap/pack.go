package codesnap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/gitx"
)

// The dirty state travels as one git pack: the blobs and trees of the
// submitter's tree (base + dirty state, Snapshot.DirtyTree) that the base's
// tree lacks, in one file in the store — or, after an earlier capture on
// the same base, a pack of what that one's tree lacks too, with the
// earlier packs named as its chain (packchain.go). A worker indexes it into its
// clone's objects once (git index-pack --strict: every object is hashed
// to its name and checked well-formed, a tree entry named .git refused)
// and reads the tree with read-tree: no file is patched, no object is
// written loose, and the copy is DirtyTree by construction — object ids
// are content hashes — checked all the same against the snapshot's Tree
// once its layers are on.

// dirtyObjects lists the objects of tree that base (a commit; "" for
// none) lacks, for pack-objects ("": none).
//
// The objects left out are those of base's tree, named as a tree: given
// the commit, rev-list --objects leaves out nothing under a bare tree
// (it marks a negative commit's tree only as it walks commits, and there
// are none to walk), so the pack held every blob of the base as well
// (20,122 objects for 11,032 dirty ones in issue 26's tree), each indexed
// again by every worker and compared with its own copy. A pack that
// continues a chain leaves out the chain's last tree as well
// (packchain.go).
func dirtyObjects(ctx context.Context, g gitCmd, base, tree string) (string, error) {
	args := []string{"rev-list", "--objects", tree}
	if base != "" {
		args = append(args, "--not", base+"^{tree}")
	}
	objs, err := g.run(ctx, args...)
	if err != nil {
		return "", fmt.Errorf("codesnap: list the dirty objects: %w", err)
	}
	if strings.TrimSpace(objs) == "" {
		return "", nil
	}
	return objs, nil
}

// packObjects stores the objects objs lists (rev-list --objects output)
// as one pack and returns its reference.
func packObjects(ctx context.Context, store *blobstore.Store, g gitCmd, objs string) (*blobstore.Ref, error) {
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

// indexPack puts snap's packs into gitDir's objects (objects/pack): the
// links of its chain gitDir lacks, oldest first, then its own pack — none
// when gitDir has the dirty tree already, only those after the newest
// link whose tree gitDir has (index-pack --strict checked that every
// object that tree reaches is there when it indexed it). Each pack comes
// from the store (which checks its digest), git index-pack --strict
// checks every object and that each one it names is in the pack or
// gitDir already, and the pack must give the tree it is named with.
func indexPack(ctx context.Context, store *blobstore.Store, gitDir, scratch string, snap *Snapshot) error {
	g := workerGit(scratch, "GIT_DIR="+gitDir)
	packs := snap.chainPacks()
	from, err := firstToIndex(ctx, g, packs)
	if err != nil {
		return err
	}
	for i := from; i < len(packs); i++ {
		what := "the dirty state's pack"
		if i < len(packs)-1 {
			what = fmt.Sprintf("link %d of the dirty state's pack chain (%s, for tree %s)", i, packs[i].Pack.Key, short(packs[i].Tree))
		}
		if err := indexOne(ctx, store, g, scratch, packs[i], what); err != nil {
			return err
		}
	}
	return nil
}

// firstToIndex is the index in packs of the first pack g's git dir
// needs: the one after the newest whose tree it has (0: none).
func firstToIndex(ctx context.Context, g gitCmd, packs []PackLink) (int, error) {
	var in strings.Builder
	for _, p := range packs {
		in.WriteString(p.Tree + "\n")
	}
	g.stdin = []byte(in.String())
	out, err := g.run(ctx, "cat-file", "--batch-check=%(objecttype)")
	if err != nil {
		return 0, fmt.Errorf("codesnap: look for the dirty state's trees: %w", err)
	}
	lines := strings.Split(out, "\n")
	for i := len(packs) - 1; i >= 0; i-- {
		if i < len(lines) && lines[i] == "tree" {
			return i + 1, nil
		}
	}
	return 0, nil
}

// indexOne fetches one pack and indexes it into g's git dir, which must
// then have its tree.
func indexOne(ctx context.Context, store *blobstore.Store, g gitCmd, scratch string, p PackLink, what string) error {
	file := filepath.Join(scratch, "dirty-"+p.Pack.SHA256[:16]+".pack")
	defer os.Remove(file)
	if err := store.GetFile(ctx, *p.Pack, file); err != nil {
		if errors.Is(err, blobstore.ErrNotFound) {
			return fmt.Errorf("codesnap: %s is not in the store %s: submit again (the submitter then ships a full pack), and check the store keeps objects longer than a day plus a run", what, store.URL())
		}
		return fmt.Errorf("codesnap: %s: %w", what, err)
	}
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer f.Close()
	c := gitx.Cmd{Dir: scratch, Env: g.env, Stdin: f, NoUserConfig: g.noUserConfig}
	if _, err := c.Run(ctx, "index-pack", "--stdin", "--strict"); err != nil {
		if p.Tree != "" && strings.HasPrefix(what, "link ") {
			// (its size matched at capture: the submitter would build on it again)
			return fmt.Errorf("codesnap: %s is refused (remove the submitter's chain records, dirty-packs/ in brood's state directory of its checkout, ~/.local/state/brood/checkouts/*/, to ship a full pack): %w", what, err)
		}
		return fmt.Errorf("codesnap: %s is refused: %w", what, err)
	}
	if _, err := g.run(ctx, "cat-file", "-e", p.Tree+"^{tree}"); err != nil {
		return fmt.Errorf("codesnap: %s lacks its tree %s", what, short(p.Tree))
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
