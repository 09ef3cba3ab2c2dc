package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// maxRecord bounds a landing or sent-starts record brood reads back.
const maxRecord = 1 << 20

// A checkout's fleet records (landed.json, a keyless checkout's
// sent.json) are trust inputs: a forged sent.json makes another's run the
// user's call, and tasks resume lands its change. They live in the user's
// state directory, fleet/KEY under taskdir.CheckoutState of the
// checkout's common git dir (landDir), which no child writes or reads
// wherever Landlock confines it (isolate.stateBaseHidden), never under
// the git dir, which an in-place writer writes wherever no kernel holds it
// (no user namespaces: review34 P2-1). Records an older brood left in
// .git/brood are never read (a call from before is "unverified"). Every
// directory from the state's checkouts/ down (checkouts, the checkout's,
// fleet, KEY) is taken only as itself, a directory reached through no
// link, and made 0700; the file only as a regular file opened without
// following a link, of bounded size, written tmp+rename. Anything else is
// no record for a read, and a refused write.

// recordDirs checks dir (STATE/checkouts/H/fleet/KEY, from landDir) and
// its three parents from checkouts/: each a directory, no link. With mk,
// a missing one is made (0700), and the state directory above it too; without,
// a missing one is fs.ErrNotExist.
func recordDirs(dir string, mk bool) error {
	h := filepath.Dir(filepath.Dir(dir))
	parts := []string{filepath.Dir(h), h, filepath.Dir(dir), dir}
	if mk {
		if err := os.MkdirAll(filepath.Dir(parts[0]), 0o700); err != nil {
			return err
		}
	}
	for _, p := range parts {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) && mk {
			if err = os.Mkdir(p, 0o700); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = os.Lstat(p)
			}
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return fmt.Errorf("%s is not a directory of brood's own (a link or a file; remove it)", p)
		}
	}
	return nil
}

// lockRecord takes the lock file name in dir, a checked record directory
// (flock, waiting while another brood holds it, until ctx ends): the
// read, change and write of a record under it is one at a time across
// every brood of the checkout. The kernel drops it when the process dies.
func lockRecord(ctx context.Context, dir, name string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), ctx.Err())
		case <-time.After(wait):
		}
	}
}

// readRecord decodes file, a record under a checked record directory,
// into v: fs.ErrNotExist when it or a directory is missing, another error
// when anything is off (a link, not a regular file, too large, not JSON).
func readRecord(file string, v any) error {
	if err := recordDirs(filepath.Dir(file), false); err != nil {
		return err
	}
	return readFileRecord(file, v)
}

// readFileRecord is readRecord of a file whose directories the caller
// checked.
func readFileRecord(file string, v any) error {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("%s is a link, not brood's record (remove it)", file)
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxRecord {
		return fmt.Errorf("%s is not a regular file of at most %d bytes (remove it)", file, maxRecord)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return err
	}
	if len(data) > maxRecord {
		return fmt.Errorf("%s is larger than %d bytes (remove it)", file, maxRecord)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
