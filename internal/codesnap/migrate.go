package codesnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
		if _, err := os.Stat(filepath.Join(repo, layoutFile)); os.IsNotExist(err) {
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
		line, err := migrateClone(ctx, repo)
		if err != nil {
			return lines, err
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// migrateClone prunes one clone of the old layout and marks it.
func migrateClone(ctx context.Context, repo string) (string, error) {
	unlock, err := lockFile(ctx, strings.TrimSuffix(repo, ".git")+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(repo, layoutFile)); err == nil {
		return "", nil // another worker migrated it meanwhile
	}
	g := workerGit(repo)
	before := objectCount(ctx, g)
	// Every packed object no ref reaches is dropped (-a -d), then every
	// loose one (prune): a bare clone has no reflog or index to keep any.
	if _, err := g.run(ctx, "-c", "gc.auto=0", "repack", "-a", "-d", "-q"); err != nil {
		return "", fmt.Errorf("codesnap: prune the clone %s of earlier submitters' dirty state: %w (or remove it: rm -rf %s)", repo, err, repo)
	}
	if _, err := g.run(ctx, "prune", "--expire=now"); err != nil {
		return "", fmt.Errorf("codesnap: prune the clone %s of earlier submitters' dirty state: %w (or remove it: rm -rf %s)", repo, err, repo)
	}
	if err := markLayout(repo); err != nil {
		return "", err
	}
	return fmt.Sprintf("the clone %s predates per-snapshot dirty homes: pruned %d object(s) its refs do not reach (earlier submitters' dirty state)", repo, max(0, before-objectCount(ctx, g))), nil
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
