package dispatch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockFile is held (flock) by the process that owns a task while it is
// queued or running, so that two parents never run or resume it at once,
// and a listing can tell a queued task from one whose parent died.
const LockFile = ".lock"

// ErrTaskBusy means another process owns the task.
var ErrTaskBusy = errors.New("task is queued or running in another process")

// LockTask takes a task's lock without waiting. The kernel drops it when the
// process dies, so a crash never leaves a task locked.
func LockTask(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR, 0o644)
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

// TaskLocked reports whether some process holds the task's lock.
func TaskLocked(dir string) bool {
	f, err := os.Open(filepath.Join(dir, LockFile))
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
