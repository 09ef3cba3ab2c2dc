package dispatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/broodhq/brood/internal/taskdir"
)

// LockFile is held (flock) by the process that owns a record directory
// other than a task's (a workflow run) while it runs, so that two processes
// never run it at once, and a listing can tell a live run from one whose
// owner died. A task's lock is a flock on its directory itself (LockDir);
// older broods held this file in the task directory too.
const LockFile = taskdir.Lock

// ErrTaskBusy means another process owns the task.
var ErrTaskBusy = errors.New("task is queued or running in another process")

// LockTask takes the lock of the directory at dir (a task directory, or
// another record directory such as a workflow run's) without waiting.
func LockTask(dir string) (func(), error) {
	if td, err := taskdir.FromPath(dir); err == nil {
		return LockDir(td)
	}
	f, err := openLockFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	return flock(f)
}

// LockDir takes a task's lock without waiting. The kernel drops it when the
// process dies, so a crash never leaves a task locked. The lock is a flock
// on the task directory itself (no file is made for it), opened without
// following links (the child can write its directory); where an older
// brood left a .lock file, that is taken too, so the two never run one task
// at once.
func LockDir(td *taskdir.Dir) (func(), error) {
	f, err := td.OpenLock()
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	unlock, err := flock(f)
	if err != nil {
		return nil, err
	}
	lf, err := td.OpenLegacyLock()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, taskdir.ErrNotRegular) {
		// No older brood's lock: a FIFO or socket a child made in its
		// place is no brood's lock, and opening it must not block.
		return unlock, nil
	}
	if err != nil {
		unlock()
		return nil, fmt.Errorf("lock task: %w", err)
	}
	unlockLegacy, err := flock(lf)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() { unlockLegacy(); unlock() }, nil
}

func flock(f *os.File) (func(), error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrTaskBusy
		}
		return nil, fmt.Errorf("lock task: %w", err)
	}
	// Unlock explicitly before closing: a child another goroutine is
	// forking at this moment shares the open file description until it
	// execs, and closing our descriptor alone would leave the task locked
	// until then (a schema retry saw its own finished task as running).
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// TaskLocked reports whether some process holds the lock of the directory
// at dir (a task directory, or another record directory).
func TaskLocked(dir string) bool {
	if td, err := taskdir.FromPath(dir); err == nil {
		return LockedDir(td)
	}
	f, err := openLockFile(filepath.Join(dir, LockFile), os.O_RDONLY)
	if err != nil {
		return false
	}
	return locked(f)
}

// openLockFile opens a record directory's .lock without following a link
// and without blocking (a FIFO in its place would wait for a writer
// forever), and refuses anything but a regular file.
func openLockFile(path string, flags int) (*os.File, error) {
	f, err := os.OpenFile(path, flags|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, taskdir.ErrNotRegular)
	}
	return f, nil
}

// LockedDir reports whether some process holds the task's lock (or the
// .lock file of an older brood).
func LockedDir(td *taskdir.Dir) bool {
	if f, err := td.OpenLock(); err == nil && locked(f) {
		return true
	}
	f, err := td.OpenLegacyLock()
	return err == nil && locked(f)
}

func locked(f *os.File) bool {
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
