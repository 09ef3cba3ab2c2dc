package dispatch

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
)

// TestLockDir: a task's lock is its directory's (no file is made); a
// second owner is refused; a .lock an older brood holds counts as held,
// and is taken too when there is one.
func TestLockDir(t *testing.T) {
	td := taskdir.Open(t.TempDir()).MustTask(NewID())
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	if LockedDir(td) {
		t.Fatal("locked before anyone took it")
	}
	unlock, err := LockDir(td)
	if err != nil {
		t.Fatal(err)
	}
	if td.Has(taskdir.Lock) {
		t.Error("LockDir made a .lock file")
	}
	if !LockedDir(td) || !TaskLocked(td.Path()) {
		t.Error("not seen as locked while held")
	}
	if _, err := LockDir(td); !errors.Is(err, ErrTaskBusy) {
		t.Errorf("second LockDir: %v, want ErrTaskBusy", err)
	}
	unlock()
	if LockedDir(td) {
		t.Error("still locked after unlock")
	}

	// An older brood holds .lock.
	f, err := os.OpenFile(td.File(taskdir.Lock), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if !LockedDir(td) {
		t.Error("a legacy .lock holder is not seen")
	}
	if _, err := LockDir(td); !errors.Is(err, ErrTaskBusy) {
		t.Errorf("LockDir beside a legacy holder: %v, want ErrTaskBusy", err)
	}
	if LockedDir(td) && syscall.Flock(int(f.Fd()), syscall.LOCK_UN) == nil {
		if unlock, err := LockDir(td); err != nil {
			t.Errorf("after the legacy holder let go: %v", err)
		} else {
			unlock()
		}
	}
}
