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

// A plan on the fleet runs its calls one after another and side by side,
// as locally, and a call must see what the calls that finished before it
// wrote. The run's tree is a chain of snapshots: the submitter's, then one
// per writer that finished, each the previous one with that writer's change
// applied (Chain, on a worker). A later call materialises the chain's tip
// like any snapshot, and the submitter lands the tip against what it
// landed before, whole or not at all (Land).

// Change is one call's change and the snapshot the call started from (the
// change is against Start's tree).
type Change struct {
	Start  *Snapshot `json:"start"`
	Result *Result   `json:"result"`
}

// Chained is what became of a change in the run's tree.
type Chained struct {
	// Applied: the change is in the new tip (Merged: by a clean three-way
	// merge, because the tree moved under it since it started).
	Applied bool     `json:"applied,omitempty"`
	Merged  bool     `json:"merged,omitempty"`
	Files   []string `json:"files,omitempty"`
	// Conflict is git's explanation when the change does not fit the tip
	// (an earlier writer changed the same lines): the tip is unchanged.
	Conflict string `json:"conflict,omitempty"`
}

// Message is one line for a call's record.
func (c *Chained) Message() string {
	switch {
	case c.Conflict != "":
		return "in conflict with what calls that finished before it wrote (same lines): not in the run's tree, nothing of it is applied: " + firstLines(c.Conflict, 3)
	case len(c.Files) == 0:
		return "no changes"
	case c.Merged:
		return fmt.Sprintf("in the run's tree by a clean three-way merge: %s", strings.Join(c.Files, ", "))
	}
	return "in the run's tree: " + strings.Join(c.Files, ", ")
}

// Chain is tip with ch applied: plain `git apply` when every hunk fits,
// else a clean three-way merge against the tree the change was made in,
// else nothing (tip itself, and the conflict). Only the index and objects
// are worked on (a scratch repository borrowing the cache's objects): no
// work tree is written. tip and ch.Start must share their base commit.
func (c *Cache) Chain(ctx context.Context, store *blobstore.Store, tip *Snapshot, ch Change) (*Snapshot, *Chained, error) {
	if err := tip.Check(); err != nil {
		return nil, nil, err
	}
	if err := ch.Result.Check(); err != nil {
		return nil, nil, err
	}
	if ch.Result == nil || ch.Result.Patch == nil {
		return tip, &Chained{Applied: true}, nil
	}
	if err := ch.Start.Check(); err != nil {
		return nil, nil, err
	}
	if ch.Start == nil || ch.Result.Tree != ch.Start.Tree {
		return nil, nil, errors.New("codesnap: the change names no start snapshot of its tree")
	}
	if ch.Start.Base != tip.Base {
		return nil, nil, fmt.Errorf("codesnap: the change's base %s is not the run's %s", short(ch.Start.Base), short(tip.Base))
	}
	s, err := c.scratch(ctx, store, tip)
	if err != nil {
		return nil, nil, err
	}
	defer s.remove()
	tipIndex := filepath.Join(s.dir, "tip.index")
	if err := s.build(ctx, store, tip, tipIndex); err != nil {
		return nil, nil, err
	}
	if ch.Start.Tree != tip.Tree {
		// The start tree's blobs: the three-way merge's base.
		if err := s.build(ctx, store, ch.Start, filepath.Join(s.dir, "start.index")); err != nil {
			return nil, nil, err
		}
	}
	patch := filepath.Join(s.dir, "change.patch")
	if err := store.GetFile(ctx, *ch.Result.Patch, patch); err != nil {
		return nil, nil, fmt.Errorf("codesnap: the change: %w", err)
	}
	out := &Chained{Files: ch.Result.Files}
	work := filepath.Join(s.dir, "work.index")
	tree, err := s.apply(ctx, tipIndex, work, patch, false)
	if err != nil {
		if tree, err = s.apply(ctx, tipIndex, work, patch, true); err != nil {
			out.Conflict = conflictOf(err)
			return tip, out, nil
		}
		out.Merged = true
	}
	out.Applied = true
	if tree == tip.Tree {
		return tip, out, nil
	}
	next, err := s.snapshotOf(ctx, store, tip, tree)
	return next, out, err
}

// conflictOf is what git said of a change that does not apply, without
// the command the chain ran (git apply --cached on its scratch index and
// file): a user who copied that would stage the change, and the file is
// gone.
func conflictOf(err error) string {
	var ge *gitx.Error
	if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
		return strings.TrimSpace(ge.Stderr)
	}
	return err.Error()
}

// scratchRepo is a bare repository borrowing the cache's objects, in a
// directory of its own under the cache's chains/, whose lock it holds
// until it is removed: PruneChains removes one a killed worker left.
type scratchRepo struct {
	dir  string
	lock *os.File
	g    gitCmd
	// packs is the git dir a snapshot's pack goes into: the scratch
	// repository's own.
	packs string
}

func (c *Cache) scratch(ctx context.Context, store *blobstore.Store, snap *Snapshot) (*scratchRepo, error) {
	format := snap.ObjectFormat
	if format == "" {
		format = "sha1"
	}
	var objects []string
	if snap.Base != "" {
		repo, err := c.ensureBase(ctx, store, snap, format)
		if err != nil {
			return nil, err
		}
		objects = objectDirs(repo)
	}
	chains := filepath.Join(c.Dir, "chains")
	if err := os.MkdirAll(chains, 0o700); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	dir, err := os.MkdirTemp(chains, "chain-")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	lock, err := holdJob(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	gone := &scratchRepo{dir: dir, lock: lock}
	git := filepath.Join(dir, "g.git")
	if _, err := workerGit(dir).run(ctx, "init", "-q", "--bare", "--object-format="+format, git); err != nil {
		gone.remove()
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	if err := writeLines(filepath.Join(git, "objects", "info", "alternates"), objects); err != nil {
		gone.remove()
		return nil, err
	}
	// No user or system configuration (merge drivers, filters) in a merge
	// of what children wrote.
	env := []string{"GIT_DIR=" + git, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	// The dirty state's packs go into this git dir, never the clone
	// (dirtyhome.go): links to the tip's dirty home's where the worker
	// has it, so only what that lacks is indexed.
	if h := c.dirtyHome(snap); h != "" && len(objects) > 0 {
		linkPacks(h, git)
	}
	return &scratchRepo{dir: dir, lock: lock, g: gitCmd{dir: dir, env: env}, packs: git}, nil
}

// remove removes the scratch repository and lets go of its lock.
func (s *scratchRepo) remove() {
	os.RemoveAll(s.dir)
	s.lock.Close()
}

func (s *scratchRepo) with(index string) gitCmd {
	g := s.g
	g.env = append(append([]string(nil), g.env...), "GIT_INDEX_FILE="+index)
	return g
}

// build puts snap's tree in index (and its blobs in the objects), checked.
func (s *scratchRepo) build(ctx context.Context, store *blobstore.Store, snap *Snapshot, index string) error {
	g := s.with(index)
	dir, err := os.MkdirTemp(s.dir, "patches-")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := readTree(ctx, store, g, s.packs, dir, snap); err != nil {
		return err
	}
	tree, err := g.line(ctx, "write-tree")
	if err != nil || tree != snap.Tree {
		return fmt.Errorf("codesnap: the snapshot's tree %s cannot be rebuilt (got %s): %v", short(snap.Tree), short(tree), err)
	}
	return nil
}

// apply applies patch to a fresh copy of from's index (whole or not at
// all) and returns the tree it gives.
func (s *scratchRepo) apply(ctx context.Context, from, work, patch string, threeWay bool) (string, error) {
	data, err := os.ReadFile(from)
	if err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	if err := os.WriteFile(work, data, 0o600); err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	g := s.with(work)
	args := []string{"apply", "--cached", "--whitespace=nowarn"}
	if threeWay {
		args = append(args, "--3way")
	}
	if _, err := g.run(ctx, append(args, patch)...); err != nil {
		return "", err
	}
	return g.line(ctx, "write-tree")
}

// snapshotOf is tip's snapshot with tree instead: the same base and
// patches, and one layer more, the difference from tip's tree (layers.go):
// the dirty state and earlier layers are not stored again. A tip at
// maxLayers is rebased into one patch from the base.
func (s *scratchRepo) snapshotOf(ctx context.Context, store *blobstore.Store, tip *Snapshot, tree string) (*Snapshot, error) {
	next := *tip
	next.Tree = tree
	from := tip.Tree
	if len(tip.Layers) >= maxLayers {
		next.Patch, next.Layers, next.Pack, next.PackChain, next.DirtyTree = nil, nil, nil, nil, ""
		if from = tip.Base; from == "" {
			var err error
			if from, err = emptyTree(ctx, s.g); err != nil {
				return nil, err
			}
		}
	}
	patch, err := s.g.run(ctx, append(append([]string{"diff-tree", "-r", "-p"}, diffFlags...), from, tree)...)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	if patch == "" {
		return &next, nil
	}
	ref, err := store.PutBytes(ctx, []byte(patch))
	if err != nil {
		return nil, fmt.Errorf("codesnap: store the run's tree: %w", err)
	}
	if len(tip.Layers) >= maxLayers {
		next.Patch = &ref
	} else {
		next.Layers = append(append([]*blobstore.Ref(nil), tip.Layers...), &ref)
	}
	return &next, nil
}
