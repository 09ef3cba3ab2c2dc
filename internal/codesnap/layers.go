package codesnap

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/broodhq/brood/internal/blobstore"
)

// A plan's tree grows by layers: the submitter's dirty state is stored
// once (Patch) and each writer's change that the run's tree takes adds one
// patch against the tree before it (Layers), so the store holds the dirty
// state once per run however many writers there are — never a new patch of
// the whole difference from the base per step — and every call of the run
// shares it.

// maxLayers bounds a snapshot's layers (a run with more writers than this
// has its tree rebased into one patch by the chain).
const maxLayers = 4096

// patches are the snapshot's patches in the order they apply to the base:
// the dirty state, then each layer.
func (s *Snapshot) patches() []*blobstore.Ref {
	var out []*blobstore.Ref
	if s.Patch != nil {
		out = append(out, s.Patch)
	}
	for _, l := range s.Layers {
		if l != nil {
			out = append(out, l)
		}
	}
	return out
}

// applyPatches applies refs in order to the index g names (its new blobs
// go to g's git dir), each fetched into dir first. dirty says refs[0] is
// the dirty patch (else they are all layers).
func applyPatches(ctx context.Context, store *blobstore.Store, g gitCmd, dir string, refs []*blobstore.Ref, dirty bool, onto string) error {
	for i, ref := range refs {
		what := "the dirty patch"
		if n := i; !dirty || i > 0 {
			if dirty {
				n--
			}
			what = fmt.Sprintf("layer %d of the run's tree", n+1)
		}
		file := filepath.Join(dir, fmt.Sprintf("layer-%d.patch", i))
		if err := store.GetFile(ctx, *ref, file); err != nil {
			return fmt.Errorf("codesnap: %s: %w", what, err)
		}
		if _, err := g.run(ctx, "apply", "--cached", "--whitespace=nowarn", file); err != nil {
			return fmt.Errorf("codesnap: %s does not apply to %s: %w", what, onto, err)
		}
	}
	return nil
}
