package fleetlink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/taskdir"
)

// lockRecords holds the worker's task records (root/.brood, or where
// taskdir keeps them) for its
// lifetime, or says which directory another worker holds. Two workers on
// one set of records read each other's tasks as their own: a retry on the
// second "picked up" the first's finished writer and returned it done with
// its change never taken (issue 26, a tester's P1-3). A directory with no
// .brood of its own shares an ancestor's, so the fix is one line away.
func lockRecords(root string) (*os.File, error) {
	// Where the records go: .brood, or the state directory taskdir keeps
	// them in when the project cannot be written (a read-only checkout, a
	// service started in /).
	if err := taskdir.Open(root).EnsureWritable(); err != nil {
		return nil, fmt.Errorf("keep this worker's task records for %s: %w: start it in a directory of its own", root, err)
	}
	dir := taskdir.Open(root).StateDir()
	path := filepath.Join(dir, "worker.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("keep this worker's task records in %s: %w: start it in a directory of its own", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another brood worker keeps its task records in %s (it holds %s): two workers cannot share them; start this one in a directory of its own (mkdir w2 && cd w2 && mkdir .brood)", dir, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
