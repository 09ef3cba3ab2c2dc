package taskdir

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// ownStateHome gives the test a state directory of its own and returns a
// checkout's record directory in it (not made).
func ownStateHome(t *testing.T) (base, dir string) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", home)
	return StateBase(), CheckoutState("/src/a/.git")
}

// TestStateRecords: a record under the state directory's checkouts/ is
// written tmp+rename into directories of brood's own (0700, the file
// 0600) and read back; a link at any name from checkouts/ down (the
// checkouts directory, the checkout's, one below, the record itself), a
// FIFO, a record over the bound, or a path outside checkouts/ is no
// record: the read is an error that is not fs.ErrNotExist, and no write
// goes through the link.
func TestStateRecords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, base, dir string) string // the record's path
		read  bool                                        // read back as written
		write bool                                        // a write is taken
	}{
		{"brood's own", func(t *testing.T, base, dir string) string {
			return filepath.Join(dir, "fleet", "K", "r.json")
		}, true, true},
		{"missing", func(t *testing.T, base, dir string) string {
			return filepath.Join(dir, "fleet", "K", "r.json")
		}, false, true},
		{"checkouts a link", func(t *testing.T, base, dir string) string {
			out := t.TempDir()
			must(t, os.MkdirAll(base, 0o700))
			must(t, os.Symlink(out, filepath.Join(base, checkoutsDir)))
			return filepath.Join(dir, "r.json")
		}, false, false},
		{"the checkout's directory a link", func(t *testing.T, base, dir string) string {
			must(t, os.MkdirAll(filepath.Dir(dir), 0o700))
			must(t, os.Symlink(t.TempDir(), dir))
			return filepath.Join(dir, "r.json")
		}, false, false},
		{"a directory below a link", func(t *testing.T, base, dir string) string {
			must(t, os.MkdirAll(dir, 0o700))
			must(t, os.Symlink(t.TempDir(), filepath.Join(dir, "fleet")))
			return filepath.Join(dir, "fleet", "r.json")
		}, false, false},
		{"the record a link", func(t *testing.T, base, dir string) string {
			must(t, os.MkdirAll(dir, 0o700))
			out := filepath.Join(t.TempDir(), "r.json")
			must(t, os.WriteFile(out, []byte(`"forged"`), 0o600))
			must(t, os.Symlink(out, filepath.Join(dir, "r.json")))
			t.Cleanup(func() {
				if b, err := os.ReadFile(out); err != nil || string(b) != `"forged"` {
					t.Errorf("the link's target now %q, %v: written through the link", b, err)
				}
			})
			return filepath.Join(dir, "r.json")
		}, false, true},
		{"the record a FIFO", func(t *testing.T, base, dir string) string {
			must(t, os.MkdirAll(dir, 0o700))
			must(t, syscall.Mkfifo(filepath.Join(dir, "r.json"), 0o600))
			return filepath.Join(dir, "r.json")
		}, false, true},
		{"outside checkouts/", func(t *testing.T, base, dir string) string {
			return filepath.Join(base, "r.json")
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, dir := ownStateHome(t)
			file := tc.spoil(t, base, dir)
			if tc.name == "brood's own" {
				must(t, WriteStateJSON(file, "mine"))
			}
			var got string
			err := ReadStateJSON(file, 1<<10, &got)
			switch {
			case tc.read && (err != nil || got != "mine"):
				t.Fatalf("read %q, %v; want brood's own record", got, err)
			case !tc.read && err == nil:
				t.Fatalf("read %q from a record that is not brood's own", got)
			case tc.name == "missing" && !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("read of a missing record: %v, want fs.ErrNotExist", err)
			case !tc.read && tc.name != "missing" && errors.Is(err, fs.ErrNotExist):
				t.Fatalf("read: %v, want an error that is not fs.ErrNotExist", err)
			}
			werr := WriteStateJSON(file, "next")
			if tc.write != (werr == nil) {
				t.Fatalf("write: %v, want taken %v", werr, tc.write)
			}
			if werr != nil && !strings.Contains(werr.Error(), base) {
				t.Errorf("write error %q names no path under %s", werr, base)
			}
			if werr != nil {
				return
			}
			for p := file; p != base; p = filepath.Dir(p) {
				st, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if want := fs.ModeDir | 0o700; p != file && st.Mode() != want || p == file && st.Mode() != 0o600 {
					t.Errorf("%s: mode %v", p, st.Mode())
				}
			}
			if got := ""; ReadStateJSON(file, 1<<10, &got) != nil || got != "next" {
				t.Errorf("read back %q", got)
			}
		})
	}
}

// TestStateRecordBound: a record larger than the bound is refused.
func TestStateRecordBound(t *testing.T) {
	_, dir := ownStateHome(t)
	file := filepath.Join(dir, "r")
	must(t, WriteStateFile(file, make([]byte, 100), false))
	if _, err := ReadStateFile(file, 99); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of 100 bytes bounded to 99: %v", err)
	}
	if data, err := ReadStateFile(file, 100); err != nil || len(data) != 100 {
		t.Fatalf("read of 100 bytes bounded to 100: %d, %v", len(data), err)
	}
}

// TestLockStateFile: the lock is one at a time across open files (two
// brood processes); a waiter takes it as soon as the holder lets go, and
// one whose context ends first returns then, holding nothing, and leaves
// the lock free for the next once the holder lets go.
func TestLockStateFile(t *testing.T) {
	_, dir := ownStateHome(t)
	must(t, MakeStateDir(dir))
	file := filepath.Join(dir, "x.lock")
	unlock, err := LockStateFile(t.Context(), file)
	must(t, err)
	if other, err := os.Open(file); err != nil {
		t.Fatal(err)
	} else if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("a second open file took the held lock: %v", err)
	} else {
		other.Close()
	}

	ctx, cancel := context.WithCancel(t.Context())
	gave := make(chan error, 1)
	go func() {
		_, err := LockStateFile(ctx, file)
		gave <- err
	}()
	cancel()
	if err := <-gave; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiter whose context ended: %v, want context.Canceled", err)
	}

	took := make(chan error, 1)
	go func() {
		u, err := LockStateFile(t.Context(), file)
		if err == nil {
			u()
		}
		took <- err
	}()
	unlock()
	if err := <-took; err != nil {
		t.Fatalf("a waiter once the holder let go: %v", err)
	}
}
