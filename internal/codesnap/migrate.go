package codesnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// layoutFile marks a clone (repos/<id>.git) made or migrated since dirty
// state lives in per-snapshot dirty homes (dirtyhome.go): it holds only
// what its refs reach (the worker's remotes' branches, pinned bases).
const layoutFile = "brood-layout"

// layoutVersion is the marker's content.
const layoutVersion = "2 dirty-homes\n"

// markLayout marks a clone as holding no submitter's dirty state.
func markLayout(repo string) error {
	if err := os.WriteFile(filepath.Join(repo, layoutFile), []byte(layoutVersion), 0o600); err != nil {
		return fmt.Errorf("codesnap: mark the clone %s: %w", repo, err)
	}
	return nil
}

// MigrateClones prunes, from every clone that predates dirty homes (no
// layout marker), the objects its refs do not reach: earlier submitters'
// uncommitted and untracked files, which that layout indexed into the
// clone every copy borrows, so any later call's child could read them
// (review18 N1). First the base checkouts no copy holds are removed (one
// of the old layout borrows those objects from the clone); each clone is
// pruned under its own lock (the one a fetch takes), then marked. It
// returns a line per clone it pruned, for the worker's log. Call it when
// a worker starts, before it takes calls.
func (c *Cache) MigrateClones(ctx context.Context) ([]string, error) {
	clones, err := filepath.Glob(filepath.Join(c.Dir, "repos", "*.git"))
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	var old []string
	for _, repo := range clones {
		// Lstat: a symlink (or any non-directory) there is no clone a
		// worker made, and pruning it would prune its target.
		if info, err := os.Lstat(repo); err != nil || !info.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(repo, layoutFile)); os.IsNotExist(err) {
			old = append(old, repo)
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	idle := &Cache{Dir: c.Dir, TreeTTL: time.Nanosecond} // every old checkout no copy holds goes
	if _, err := idle.PruneTrees(ctx); err != nil {
		return nil, err
	}
	var lines []string
	for _, repo := range old {
		line, err := c.migrateClone(ctx, repo)
		if err != nil {
			return lines, err
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines, nil
}

// pruneGrace is how old an object no ref reaches must be before the
// migration drops it: one a worker is writing now (the old layout indexed
// a call's dirty state into the clone outside the clone's lock) stays.
const pruneGrace = "1.hour.ago"

// migrateClone prunes one clone of the old layout and marks it, under
// the clone's lock, unless anything that may borrow its objects is in
// use (a base checkout, a dirty home, a copy, a chain step: another
// worker sharing the cache is running a call); then it is left for a
// later start and the line says so. It is marked only when no object its
// refs do not reach is left (one younger than pruneGrace stays for a
// later start too).
func (c *Cache) migrateClone(ctx context.Context, repo string) (string, error) {
	unlock, err := lockFile(ctx, strings.TrimSuffix(repo, ".git")+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(repo, layoutFile)); err == nil {
		return "", nil // another worker migrated it meanwhile
	}
	// Taken after the clone's lock and without waiting (a call holding
	// one may wait for the clone's lock): held until the clone is pruned,
	// so no idle checkout is taken up meanwhile.
	locks, busy := holdIdle(c.Dir)
	defer closeAll(locks)
	prefix := fmt.Sprintf("the clone %s predates per-snapshot dirty homes: ", repo)
	if busy != "" {
		return prefix + "left for a later start, a running call may borrow its objects (" + busy + " is in use)", nil
	}
	g := workerGit(repo)
	fail := func(err error) error {
		return fmt.Errorf("codesnap: prune the clone %s of earlier submitters' dirty state: %w (or stop every worker on this cache and remove it: rm -rf %s)", repo, err, repo)
	}
	before := objectCount(ctx, g)
	// Every packed object no ref reaches is dropped (-A -d) or, if
	// younger than pruneGrace, made loose; then every loose one older
	// than that (prune): a bare clone has no reflog or index to keep any.
	if _, err := g.run(ctx, "-c", "gc.auto=0", "repack", "-A", "-d", "-q", "--unpack-unreachable="+pruneGrace); err != nil {
		return "", fail(err)
	}
	if _, err := g.run(ctx, "prune", "--expire="+pruneGrace); err != nil {
		return "", fail(err)
	}
	pruned := fmt.Sprintf("pruned %d object(s) its refs do not reach (earlier submitters' dirty state)", max(0, before-objectCount(ctx, g)))
	left, err := g.run(ctx, "prune", "--dry-run", "--expire=now")
	if err != nil {
		return "", fail(err)
	}
	if n := strings.Count(left, "\n"); n > 0 {
		return prefix + pruned + "; " + strconv.Itoa(n) + " younger than an hour left for a later start", nil
	}
	if err := markLayout(repo); err != nil {
		return "", err
	}
	return prefix + pruned, nil
}

// holdIdle takes, without waiting, every lock under dir that a live
// borrower of a clone's objects holds (trees/KEY.lock, dirty/KEY.lock and .make,
// jobs/*/.lock, chains/*/.lock). It returns those it took and, if one is
// held, that one's path (the caller then leaves the clone alone).
func holdIdle(dir string) ([]*os.File, string) {
	var held []*os.File
	for _, pattern := range []string{"trees/*.lock", "dirty/*.lock", "dirty/*.make", "jobs/*/.lock", "chains/*/.lock"} {
		paths, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, p := range paths {
			f, err := os.OpenFile(p, os.O_RDWR|unix.O_NOFOLLOW, 0)
			if err != nil {
				continue // gone meanwhile, or not a lock we made
			}
			if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
				f.Close()
				return held, p
			}
			held = append(held, f)
		}
	}
	return held, ""
}

// closeAll closes files (releasing their locks).
func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// objectCount is how many objects a git dir holds, loose and packed (0
// when git does not say).
func objectCount(ctx context.Context, g gitCmd) int {
	out, err := g.run(ctx, "count-objects", "-v")
	if err != nil {
		return 0
	}
	n := 0
	for l := range strings.Lines(out) {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if ok && (k == "count" || k == "in-pack") {
			i, _ := strconv.Atoi(v)
			n += i
		}
	}
	return n
}
