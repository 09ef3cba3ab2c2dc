package codesnap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
)

// The lower layer of an overlay copy. A clean snapshot's is the cache's
// checkout of its base commit. A dirty one's is a checkout of the base with
// the submitter's dirty patch on it (its *root* tree), made once per
// (repository, base, patch) and shared by every call of the run, so a call
// on a tree with thousands of modified and untracked files does not write
// them again: its upper layer starts with only the run's layers (earlier
// writers' changes) and a retry's partial change. The root's objects go
// into the snapshot's dirty home (dirtyhome.go), never the clone; the
// checkout's .git borrows from both.

// lower is a verified lower layer, as this worker process checked it.
type lower struct {
	// tree is the checkout's tree: the base commit's, or the root tree.
	tree string
	// base is the snapshot's base commit (a derived checkout's child
	// index is made from its donor's on the same base: childindex.go).
	base string
	// objects is its dirty home's object directory ("" for a clean
	// snapshot's): a derivation from it reads the donor's tree there.
	objects string
	// treeID is that tree's object id (tree is a commit's id for a clean
	// snapshot): what a read-only call on the checkout itself is checked
	// against (the snapshot's Tree).
	treeID string
	// index is the verified index of that tree (stat data of the checkout).
	index []byte
	// stamp is when that index was written (its file's mtime): a file
	// changed no earlier is racily clean, checked by content (statcheck.go).
	stamp time.Time
	// child is the child's .git/index: the base commit's tree, with the
	// checkout's stat data where a file is the base's, so the child's git
	// status shows the dirty state as the submitter's did (unstaged).
	child []byte
	// plan is index laid out for the stat check (remember makes it).
	plan *statPlan
	// checks shares the stat check among the calls that ask together.
	checks rounds
	// guard, when quiet, vouches for the checkout without a check
	// (guard.go); noGuard: arming failed where the stat check passed
	// (no inotify or leases here, too many files), so it is not tried
	// again.
	gmu     sync.Mutex
	guard   *guard
	noGuard bool
}

// checkNow is a check of l's checkout at tree begun after the call: its
// guard's word where it is quiet (guard.go), or else a stat check shared
// with the calls that ask with it (rounds), which arms a new guard.
func (l *lower) checkNow(ctx context.Context, tree, format string) (bool, error) {
	l.gmu.Lock()
	quiet := l.guard.quiet()
	l.gmu.Unlock()
	if quiet {
		return true, nil
	}
	return l.checks.run(ctx, func() bool {
		if l.plan != nil && l.arm(tree) {
			return true
		}
		return l.statClean(tree, format)
	})
}

// arm replaces l's guard with one armed on the checkout at tree (its
// stat check included); false where it could not be (the stat check
// then decides).
func (l *lower) arm(tree string) bool {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	if l.guard.quiet() {
		return true
	}
	l.guard.trip()
	l.guard = nil
	if l.noGuard {
		return false
	}
	l.guard = armGuard(tree, l.plan, l.stamp)
	if l.guard == nil && l.plan.clean(tree, l.stamp) {
		l.noGuard = true
	}
	return l.guard != nil
}

// unguard trips l's guard: l is no longer the checkout's (its leases
// would hold up whoever rewrites the files).
func (l *lower) unguard() {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	l.guard.trip()
	l.guard = nil
}

// statClean reports whether the checkout at tree is provably l's
// verified tree now (statcheck.go).
func (l *lower) statClean(tree, format string) bool {
	if l.plan == nil {
		return statClean(tree, l.index, l.stamp, format)
	}
	return l.plan.clean(tree, l.stamp)
}

// lowerKey names a snapshot's lower checkout in the cache's trees/.
func lowerKey(snap *Snapshot) string {
	id := snap.Repo + "\x00" + snap.Base
	if snap.Patch != nil {
		id += "\x00" + snap.Patch.SHA256
	}
	if snap.Pack != nil {
		id += "\x00pack\x00" + snap.Pack.SHA256 + "\x00" + snap.DirtyTree
		// (its dirty home holds the chain's packs too: dirtyhome.go)
		for _, l := range snap.PackChain {
			if l.Pack != nil {
				id += "\x00link\x00" + l.Pack.SHA256 + "\x00" + l.Tree
			}
		}
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:12])
}

// lowerTree is the tree a snapshot's lower checkout holds: the base
// commit's, or base + dirty patch, written into the snapshot's dirty home
// (dirtyhome.go; the patch read from the store, which checks its digest)
// once per process.
func (c *Cache) lowerTree(ctx context.Context, store *blobstore.Store, repo, scratch string, snap *Snapshot, format string) (string, error) {
	if !snap.dirty() {
		return snap.Base, nil
	}
	key := lowerKey(snap)
	home, err := c.ensureDirtyHome(ctx, repo, snap, format)
	if err != nil {
		return "", err
	}
	if t, ok := c.roots.Load(key); ok {
		return t.(string), nil
	}
	dir, err := os.MkdirTemp(scratch, "root-")
	if err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(dir)
	if snap.Pack != nil {
		// The pack's tree is the root: no index to build. (The links of
		// its chain the clone lacks go in first: indexPack.)
		if err := indexPack(ctx, store, home, dir, snap); err != nil {
			return "", err
		}
		c.roots.Store(key, snap.DirtyTree)
		return snap.DirtyTree, nil
	}
	g := workerGit(dir, "GIT_DIR="+home, "GIT_INDEX_FILE="+filepath.Join(dir, "index"))
	if err := readRoot(ctx, store, g, home, dir, snap); err != nil {
		return "", err
	}
	tree, err := g.line(ctx, "write-tree")
	if err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	c.roots.Store(key, tree)
	return tree, nil
}

// childIndex is the base commit's index for the child's repository in a
// dirty lower checkout at tree, from the verified index of its root tree:
// a two-tree read-tree keeps the stat data of every file the base has
// unchanged (nothing is hashed again) and drops the others', so git sees
// the dirty files as modified and the untracked ones as untracked.
func childIndex(ctx context.Context, repo, tree, scratch string, verified []byte, root string, snap *Snapshot) ([]byte, error) {
	tmp, err := os.CreateTemp(scratch, "child-*.index")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	_, werr := tmp.Write(verified)
	tmp.Close()
	defer os.Remove(tmp.Name())
	if werr != nil {
		return nil, fmt.Errorf("codesnap: %w", werr)
	}
	g := workerGit(tree, "GIT_DIR="+repo, "GIT_WORK_TREE="+tree, "GIT_INDEX_FILE="+tmp.Name())
	if _, err := g.run(ctx, "read-tree", "-m", root, snap.Base); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	return b, nil
}
