package codesnap

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Dirty homes. A submission's dirty state (its pack and chain, or its
// patch's blobs) is the submitter's untracked and uncommitted files: it
// never goes into the clone every copy of the repository borrows from
// (repos/<id>.git), where any child of any submitter would read it
// (`git cat-file --batch-all-objects --batch` through its alternates:
// review 15, C1). A full copy indexes it into its own git dir (meta.git,
// A snapshot's dirty objects go into a git dir of its own,
// dirty/<lowerKey>.git, named by everything the snapshot ships
// (repository, base, pack, its chain's links and tree, or patch), whose alternates name the clone (so
// index-pack --strict finds the base's objects). Its lower checkout and
// its copies borrow from it and the clone: a child reaches the clone's
// fetched history and the objects of the packs its own snapshot names,
// nothing of another's. A snapshot that continues a chain (packchain.go)
// starts with the packs of the home of its chain's last link, where this
// worker has it (hard links: a pack is never rewritten), so it indexes
// only its own pack, as it did into the clone: that home's packs are
// links of its own chain.

// dirtyHome is the git dir of snap's dirty objects on this worker: ""
// for a clean snapshot.
func (c *Cache) dirtyHome(snap *Snapshot) string {
	if !snap.dirty() {
		return ""
	}
	return filepath.Join(c.Dir, "dirty", lowerKey(snap)+".git")
}

// chainPrefix is the snapshot the chain's link i shipped as its own
// pack (its chain the links before it).
func chainPrefix(snap *Snapshot, i int) *Snapshot {
	l := snap.PackChain[i]
	return &Snapshot{Repo: snap.Repo, Base: snap.Base, Pack: l.Pack, DirtyTree: l.Tree, PackChain: snap.PackChain[:i]}
}

// lowerGitDir is a git dir that reaches every object of snap's lower
// tree: its dirty home, else the clone.
func (c *Cache) lowerGitDir(repo string, snap *Snapshot) string {
	if h := c.dirtyHome(snap); h != "" {
		return h
	}
	return repo
}

// lowerObjects are the object directories a copy of snap borrows from
// (a lower checkout's and a copy's alternates): its dirty home's, then
// the clone's. Each is named itself (not only through the dirty home's
// own alternates) for the child's confinement, which opens what the
// copy's alternates name and nothing further.
func (c *Cache) lowerObjects(repo string, snap *Snapshot) []string {
	objs := objectDirs(repo)
	if h := c.dirtyHome(snap); h != "" {
		objs = append([]string{filepath.Join(h, "objects")}, objs...)
	}
	return objs
}

// ensureDirtyHome makes snap's dirty home (a bare git dir borrowing the
// clone's objects) if it is not there, and returns it.
func (c *Cache) ensureDirtyHome(ctx context.Context, repo string, snap *Snapshot, format string) (string, error) {
	home := c.dirtyHome(snap)
	if _, err := os.Stat(filepath.Join(home, "HEAD")); err == nil {
		return home, nil
	}
	if err := os.MkdirAll(filepath.Dir(home), 0o700); err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	// Made under a lock of its own, held only while it is made (a full
	// copy holds homeLock shared for its life: waiting for that lock
	// here would wait for that copy's end).
	unlock, err := lockFile(ctx, strings.TrimSuffix(home, ".git")+".make")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(home, "HEAD")); err == nil {
		return home, nil
	}
	if err := initHome(home, format, objectDirs(repo)); err != nil {
		return "", err
	}
	if f, err := os.OpenFile(homeLock(home), os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		f.Close() // (its time is the home's last use: pruneDirty)
	}
	for i := len(snap.PackChain) - 1; i >= 0; i-- {
		if snap.PackChain[i].Pack == nil {
			break
		}
		if linkPacks(c.dirtyHome(chainPrefix(snap, i)), home) {
			break
		}
	}
	return home, nil
}

// initHome creates a dirty home as initBare would a bare repository
// borrowing objects (no hooks, no gc), without a git process (one per
// new dirty state on the worker: git init and its config calls cost
// more than indexing a small pack): made aside, then renamed into place.
func initHome(home, format string, objects []string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(home), ".init-")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(d)), 0o700); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	version, ext := "0", ""
	if format == "sha256" {
		version, ext = "1", "[extensions]\n\tobjectformat = sha256\n"
	}
	config := "[core]\n\trepositoryformatversion = " + version + "\n\tbare = true\n\thooksPath = /dev/null\n" +
		"[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n" + ext
	for name, content := range map[string]string{"HEAD": "ref: refs/heads/main\n", "config": config} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o600); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	if err := writeLines(filepath.Join(tmp, "objects", "info", "alternates"), objects); err != nil {
		return err
	}
	os.RemoveAll(home) // a leftover without HEAD
	if err := os.Rename(tmp, home); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return nil
}

// linkPacks hard-links the packs of the git dir from into to's (each
// pack's index last: git takes a pack by its index); false when from
// has none or a link fails (to then indexes the chain itself).
func linkPacks(from, to string) bool {
	src, dst := filepath.Join(from, "objects", "pack"), filepath.Join(to, "objects", "pack")
	names, err := os.ReadDir(src)
	if err != nil {
		return false
	}
	slices.SortStableFunc(names, func(a, b os.DirEntry) int {
		return cmp.Compare(idxLast(a.Name()), idxLast(b.Name()))
	})
	n := 0
	for _, e := range names {
		if !strings.HasPrefix(e.Name(), "pack-") || !e.Type().IsRegular() {
			continue
		}
		if err := os.Link(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil && !errors.Is(err, os.ErrExist) {
			return false
		}
		n++
	}
	return n > 0
}

func idxLast(name string) int {
	if strings.HasSuffix(name, ".idx") {
		return 1
	}
	return 0
}

// fullCopyHome is, for a full copy of a dirty snapshot, the object
// directories it borrows from (lowerObjects) and its dirty home, which
// it holds (a shared lock, as an overlay holds its lower checkout's)
// until Cleanup, so pruneDirty leaves it.
func (c *Cache) fullCopyHome(ctx context.Context, co *Checkout, repo string, snap *Snapshot, format string) ([]string, string, error) {
	for range 2 {
		home, err := c.ensureDirtyHome(ctx, repo, snap, format)
		if err != nil {
			return nil, "", err
		}
		lock, err := flockFile(ctx, homeLock(home), unix.LOCK_SH)
		if err != nil {
			return nil, "", err
		}
		if _, err := os.Stat(filepath.Join(home, "HEAD")); err != nil {
			lock.Close() // (pruned between the two)
			continue
		}
		co.treeLock = lock
		now := time.Now()
		_ = os.Chtimes(lock.Name(), now, now) // (used now: see pruneDirty)
		return c.lowerObjects(repo, snap), home, nil
	}
	return nil, "", fmt.Errorf("codesnap: the dirty home of %s was removed twice while this call took it", short(snap.Tree))
}

// cloneOf is the clone a cache git dir borrows from: repo itself, or for
// a base's git dir (bases/NAME-BASE.git, cache.go) repos/NAME.git.
func (c *Cache) cloneOf(repo string) string {
	bases := filepath.Join(c.Dir, "bases")
	if filepath.Dir(repo) != bases {
		return repo
	}
	name, _, _ := strings.Cut(filepath.Base(repo), "-")
	return filepath.Join(c.Dir, "repos", name+".git")
}

// homeLock is the lock file of a dirty home: shared by a full copy that
// uses it, taken exclusively (never waiting) to remove it.
func homeLock(home string) string { return strings.TrimSuffix(home, ".git") + ".lock" }

// pruneDirty removes the dirty homes idle for ttl (their lock untouched
// and free: no full copy holds one) whose lower checkout is gone and not
// being made (its lock free).
func (c *Cache) pruneDirty(ctx context.Context, trees string, ttl time.Duration) {
	dirty := filepath.Join(c.Dir, "dirty")
	entries, err := os.ReadDir(dirty)
	if err != nil {
		return
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return
		}
		if strings.HasPrefix(e.Name(), ".del-") {
			removeAll(filepath.Join(dirty, e.Name())) // (a prune killed halfway)
			continue
		}
		key, ok := strings.CutSuffix(e.Name(), ".git")
		if !ok {
			continue
		}
		withIdle(filepath.Join(dirty, key+".lock"), ttl, func() {
			if l, err := os.OpenFile(filepath.Join(trees, key+".lock"), os.O_RDWR, 0); err == nil {
				defer l.Close()
				if unix.Flock(int(l.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
					return
				}
			}
			if _, err := os.Stat(filepath.Join(trees, key)); err == nil {
				return
			}
			aside := filepath.Join(dirty, ".del-"+key)
			if os.Rename(filepath.Join(dirty, e.Name()), aside) == nil {
				removeAll(aside)
			}
		})
	}
}
