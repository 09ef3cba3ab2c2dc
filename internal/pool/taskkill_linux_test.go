package pool

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestLockHolders: the owner of a task is found from the flock on its
// directory, or on the .lock file an older brood held in it; a link in the
// directory's place is refused, a link at .lock is no one's.
func TestLockHolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hold := func(path string) *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if got, err := lockHolders(dir); err != nil || len(got) != 0 {
		t.Fatalf("nobody holds it: %v, %v", got, err)
	}
	d := hold(dir)
	if got, err := lockHolders(dir); err != nil || !slices.Contains(got, os.Getpid()) {
		t.Errorf("directory lock: %v, %v; want this process", got, err)
	}
	d.Close()
	if err := os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l := hold(filepath.Join(dir, ".lock"))
	if got, err := lockHolders(dir); err != nil || !slices.Contains(got, os.Getpid()) {
		t.Errorf("legacy .lock: %v, %v; want this process", got, err)
	}
	l.Close()
	link := filepath.Join(t.TempDir(), "task")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, err := lockHolders(link); err == nil {
		t.Error("a link in the task directory's place was trusted")
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "victim"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v := hold(filepath.Join(other, "victim"))
	defer v.Close()
	if err := os.Remove(filepath.Join(dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "victim"), filepath.Join(dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	if got, err := lockHolders(dir); err != nil || len(got) != 0 {
		t.Errorf("a link at .lock counted: %v, %v", got, err)
	}
}
