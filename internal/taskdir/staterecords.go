package taskdir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// brood's records of each checkout (CheckoutDir: a fleet call's sent
// starts and landings, the submitter's dirty pack chain and capture
// index) are trust inputs, kept in the user's state directory, outside
// every tree a child writes and hidden from every child Landlock confines
// (isolate.stateBaseHidden), never under the git dir, which an in-place
// writer nothing holds writes (review34 P2-1). They are read and written
// only here, one way: the state directory itself is the user's (it may be
// reached through a link, a linked home); every name from its checkouts/
// down is brood's own, taken only as itself — a directory reached through
// no link, made 0700; a record a regular file opened without following a
// link and without blocking (a FIFO), of bounded size, written tmp+rename
// (0600; synced where the caller says it must survive a power cut).
// Anything else is no record for a read and a refused write, with an error
// that names the path.

// checkoutsDir is the directory under the state directory that holds
// every checkout's records.
const checkoutsDir = "checkouts"

// stateRel splits p, a path at or below the state directory's checkouts/
// (as CheckoutDir and its callers join it), into the state directory and
// p's path from there.
func stateRel(p string) (base, rel string, err error) {
	base = StateBase()
	if base == "" {
		return "", "", fmt.Errorf("%s: no state directory to keep brood's records in (set HOME or XDG_STATE_HOME)", p)
	}
	rel, err = filepath.Rel(base, filepath.Clean(p))
	if err != nil || rel != checkoutsDir && !strings.HasPrefix(rel, checkoutsDir+"/") {
		return "", "", fmt.Errorf("%s is not in brood's records of checkouts (%s)", p, filepath.Join(base, checkoutsDir))
	}
	return base, rel, nil
}

// notOwn is the error for a name from checkouts/ down that is not brood's
// own (a link, or not the directory or regular file it should be).
func notOwn(p string) error {
	return fmt.Errorf("%s is not brood's own record (a link, or not a directory where one should be; remove it)", p)
}

// stateErr names p in err, and says plainly when a link was in the way.
func stateErr(p string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, ErrLink) {
		return notOwn(p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: p, Err: pe.Err}
	}
	return &fs.PathError{Op: "open", Path: p, Err: err}
}

// CheckStateDir checks dir, at or below the state directory's checkouts/,
// and every directory from checkouts/ down to it: each a directory reached
// through no link. fs.ErrNotExist when one is missing.
func CheckStateDir(dir string) error {
	base, rel, err := stateRel(dir)
	if err != nil {
		return err
	}
	f, err := openFileBeneath(base, rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return stateErr(dir, err)
	}
	return f.Close()
}

// MakeStateDir makes dir, at or below the state directory's checkouts/,
// and every directory from the state directory down to it that is
// missing (0700), and checks each from checkouts/ down is a directory
// reached through no link.
func MakeStateDir(dir string) error {
	base, rel, err := stateRel(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return err
	}
	cur, err := openRoot(base)
	if err != nil {
		return err
	}
	defer func() { unix.Close(cur) }()
	for name := range strings.SplitSeq(rel, "/") {
		if err := unix.Mkdirat(cur, name, 0o700); err != nil && err != unix.EEXIST {
			return stateErr(dir, err)
		}
		fd, err := unix.Openat(cur, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return stateErr(dir, err)
		}
		unix.Close(cur)
		cur = fd
	}
	return nil
}

// ReadStateFile reads file, a record at or below the state directory's
// checkouts/: fs.ErrNotExist when it or a directory on the way is
// missing, another error when anything is off (a link on the way, not a
// regular file, larger than max bytes).
func ReadStateFile(file string, max int64) ([]byte, error) {
	base, rel, err := stateRel(file)
	if err != nil {
		return nil, err
	}
	data, err := readBeneath(base, rel, max)
	if err != nil {
		return nil, stateErr(file, err)
	}
	return data, nil
}

// ReadStateJSON decodes the record file (ReadStateFile) into v.
func ReadStateJSON(file string, max int64, v any) error {
	data, err := ReadStateFile(file, max)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &ParseError{Path: file, Err: err}
	}
	return nil
}

// WriteStateFile replaces the record file, at or below the state
// directory's checkouts/, with data: its directories made where missing
// (MakeStateDir), a temporary file beside it renamed into place (a reader
// sees the old record or the new one; a link at its name is replaced,
// never written through), synced first with sync.
func WriteStateFile(file string, data []byte, sync bool) error {
	if err := MakeStateDir(filepath.Dir(file)); err != nil {
		return err
	}
	base, rel, err := stateRel(file)
	if err != nil {
		return err
	}
	if err := writeBeneathMode(base, rel, data, sync, 0o600); err != nil {
		return stateErr(file, err)
	}
	return nil
}

// WriteStateJSON writes v as the record file (WriteStateFile), synced.
func WriteStateJSON(file string, v any) error {
	data, err := encode(file, v)
	if err != nil {
		return err
	}
	return WriteStateFile(file, data, true)
}

// LockStateFile takes an exclusive flock on file, a lock file in a
// checked directory at or below the state directory's checkouts/ (made
// 0600 if missing, opened without following a link), waiting while
// another holds it until ctx ends. The kernel drops it when the process
// dies; unlock drops it sooner.
func LockStateFile(ctx context.Context, file string) (unlock func(), err error) {
	base, rel, err := stateRel(file)
	if err != nil {
		return nil, err
	}
	f, err := openFileBeneath(base, rel, unix.O_RDWR|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, stateErr(file, err)
	}
	if err := flockCtx(ctx, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", file, err)
	}
	return func() { f.Close() }, nil
}

// flockCtx takes f's exclusive flock: at once when it is free, else
// blocked in the kernel (woken when the holder lets go: no poll) in a
// goroutine of its own, on a second descriptor of f's open file (the
// lock is the open file's), until ctx ends. A lock that comes after ctx
// ended goes when that goroutine closes its descriptor, the caller's
// closed already.
func flockCtx(ctx context.Context, f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // (a try: nothing left waiting)
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	got := make(chan error, 1)
	go func() {
		err := unix.Flock(fd, unix.LOCK_EX)
		for err == unix.EINTR {
			err = unix.Flock(fd, unix.LOCK_EX)
		}
		got <- err
	}()
	select {
	case err := <-got:
		unix.Close(fd)
		return err
	case <-ctx.Done():
		go func() { <-got; unix.Close(fd) }()
		return ctx.Err()
	}
}
