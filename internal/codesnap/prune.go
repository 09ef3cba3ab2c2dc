package codesnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
