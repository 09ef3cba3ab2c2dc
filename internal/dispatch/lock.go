package dispatch

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/broodhq/brood/internal/taskdir"
)

// LockFile is held (flock) by the process that owns a task while it is
// queued or running, so that two parents never run or resume it at once,
// and a listing can tell a queued task from one whose parent died.
const LockFile = taskdir.Lock

// ErrTaskBusy means another process owns the task.
var ErrTaskBusy = errors.New("task is queued or running in another process")

// LockTask takes the lock of the task directory at dir without waiting.
func LockTask(dir string) (func(), error) {
	td, err := taskdir.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	return LockDir(td)
}

// LockDir takes a task's lock without waiting. The kernel drops it when the
// process dies, so a crash never leaves a task locked. The lock file is
// opened without following links (the child can write its directory).
func LockDir(td *taskdir.Dir) (func(), error) {
	f, err := td.OpenLock(true)
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrTaskBusy
		}
		return nil, fmt.Errorf("lock task: %w", err)
	}
	return func() { f.Close() }, nil
}

// TaskLocked reports whether some process holds the lock of the task
// directory at dir.
func TaskLocked(dir string) bool {
	td, err := taskdir.FromPath(dir)
	return err == nil && LockedDir(td)
}

// LockedDir reports whether some process holds the task's lock.
func LockedDir(td *taskdir.Dir) bool {
	f, err := td.OpenLock(false)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
