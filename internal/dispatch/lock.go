package dispatch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/broodhq/brood/internal/taskdir"
)

// LockFile is held (flock) by the process that owns a task while it is
// queued or running, so that two parents never run or resume it at once,
// and a listing can tell a queued task from one whose parent died.
const LockFile = taskdir.Lock

// ErrTaskBusy means another process owns the task.
var ErrTaskBusy = errors.New("task is queued or running in another process")

// LockTask takes the lock of the directory at dir (a task directory, or
// another record directory such as a workflow run's) without waiting.
func LockTask(dir string) (func(), error) {
	if td, err := taskdir.FromPath(dir); err == nil {
		return LockDir(td)
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	return flock(f)
}

// LockDir takes a task's lock without waiting. The kernel drops it when the
// process dies, so a crash never leaves a task locked. The lock file is
// opened without following links (the child can write its directory).
func LockDir(td *taskdir.Dir) (func(), error) {
	f, err := td.OpenLock(true)
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	return flock(f)
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
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	return locked(f)
}

// LockedDir reports whether some process holds the task's lock.
func LockedDir(td *taskdir.Dir) bool {
	f, err := td.OpenLock(false)
	if err != nil {
		return false
	}
	return locked(f)
}

func locked(f *os.File) bool {
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
