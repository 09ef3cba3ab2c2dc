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

// holdJob takes the job directory's lock for the life of the copy, so
// PruneJobs can tell a live copy from one a killed worker left behind.
func holdJob(job string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(job, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("codesnap: lock the copy: %w", err)
	}
	return f, nil
}

// PruneJobs removes the copies no live Checkout holds: what a worker that
// was killed (kill -9, a lost host) left under Dir/jobs. A copy younger
// than a minute is left alone (it may be being made). It returns how many
// it removed. Call it when a worker starts.
func (c *Cache) PruneJobs(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(filepath.Join(c.Dir, "jobs"))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("codesnap: %w", err)
	}
	n := 0
	for _, e := range entries {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		job := filepath.Join(c.Dir, "jobs", e.Name())
		info, err := e.Info()
		if err != nil || !e.IsDir() || time.Since(info.ModTime()) < time.Minute {
			continue
		}
		f, err := os.OpenFile(filepath.Join(job, ".lock"), os.O_RDWR, 0)
		if err == nil {
			if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
				f.Close()
				continue // in use
			}
		}
		co := &Checkout{job: job}
		if err := co.Cleanup(); err == nil {
			n++
		}
		if f != nil {
			f.Close()
		}
	}
	return n, nil
}

// PruneTrees removes the base checkouts (overlay.go) that no copy holds
// and none has used for TreeTTL, with their dirty homes (dirtyhome.go),
// and what a worker killed while making or removing one left behind. It returns how many checkouts it removed. A
// checkout goes in two steps (renamed aside, then removed) so a crash
// halfway never leaves half a checkout where a copy would take it.
func (c *Cache) PruneTrees(ctx context.Context) (int, error) {
	ttl := c.TreeTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	trees := filepath.Join(c.Dir, "trees")
	entries, err := os.ReadDir(trees)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("codesnap: %w", err)
	}
	n := 0
	for _, e := range entries {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".del-"):
			removeAll(filepath.Join(trees, name))
		case strings.HasPrefix(name, ".tmp-"):
			key, _, _ := strings.Cut(strings.TrimPrefix(name, ".tmp-"), "-")
			withIdle(filepath.Join(trees, key+".lock"), 0, func() { removeAll(filepath.Join(trees, name)) })
		case strings.HasSuffix(name, ".lock"):
			key := strings.TrimSuffix(name, ".lock")
			withIdle(filepath.Join(trees, name), ttl, func() {
				dir := filepath.Join(trees, key)
				if _, err := os.Stat(dir); err != nil {
					return
				}
				aside := filepath.Join(trees, ".del-"+key+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
				if os.Rename(dir, aside) == nil {
					removeAll(aside)
					n++
				}
			})
		}
	}
	c.pruneDirty(ctx, trees, ttl) // (the dirty homes of checkouts gone)
	return n, nil
}

// withIdle runs f holding lock exclusively, if nobody holds it and it was
// last touched more than idle ago.
func withIdle(lock string, idle time.Duration, f func()) {
	info, err := os.Stat(lock)
	if err != nil || time.Since(info.ModTime()) < idle {
		return
	}
	l, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer l.Close()
	if unix.Flock(int(l.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return
	}
	f()
}

// PruneChains removes the scratch repositories of chain steps (chain.go)
// no live step holds: what a worker killed during one left under
// Dir/chains (a copy of the change and of the run's index, which can be
// large). One younger than a minute is left alone (it may be being made).
// It returns how many it removed.
func (c *Cache) PruneChains(ctx context.Context) (int, error) {
	chains := filepath.Join(c.Dir, "chains")
	entries, err := os.ReadDir(chains)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("codesnap: %w", err)
	}
	n := 0
	for _, e := range entries {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		info, err := e.Info()
		if err != nil || !e.IsDir() || time.Since(info.ModTime()) < time.Minute {
			continue
		}
		dir := filepath.Join(chains, e.Name())
		lock := filepath.Join(dir, ".lock")
		if _, err := os.Stat(lock); os.IsNotExist(err) {
			if os.RemoveAll(dir) == nil {
				n++ // killed before it took its lock
			}
			continue
		}
		withIdle(lock, 0, func() {
			if os.RemoveAll(dir) == nil {
				n++
			}
		})
	}
	return n, nil
}

// Prune is PruneJobs, PruneChains and PruneTrees: what a worker runs when
// it starts and now and then while it runs.
func (c *Cache) Prune(ctx context.Context) error {
	if _, err := c.PruneJobs(ctx); err != nil {
		return err
	}
	if _, err := c.PruneChains(ctx); err != nil {
		return err
	}
	_, err := c.PruneTrees(ctx)
	return err
}
