package codesnap

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/broodhq/brood/internal/taskdir"
)

// The submitter's records of a checkout (the dirty pack chain, the
// capture index) live in the user's state directory of the checkout,
// taskdir.CheckoutState of its common git dir with links followed:
// outside every tree a child writes and hidden from every child Landlock
// confines, never under the git dir, which an in-place writer nothing
// holds writes (review34 P2-1). Each is read and written within the
// state directory's checkouts/ (os.Root: no link out of it followed), so
// a link at the checkout's directory or below is refused as any on the
// way.

// stateFile is where the record name under dir (slash-separated) of the
// checkout whose common git dir is common lives: rel (H/dir/name) under
// home, the state directory's checkouts/. "", "" without a home (or
// common unresolvable): no record is kept.
func stateFile(common, dir, name string) (home, rel string) {
	real, err := filepath.EvalSymlinks(common)
	if err != nil {
		return "", ""
	}
	h := taskdir.CheckoutState(real)
	if h == "" {
		return "", ""
	}
	return filepath.Dir(h), path.Join(filepath.Base(h), dir, name)
}

// workTreeName names a work tree's record of a checkout (linked work
// trees share the common dir and keep one each): n bytes of the SHA-256
// of its top directory, in hex.
func workTreeName(top string, n int) string {
	sum := sha256.Sum256([]byte(filepath.Clean(top)))
	return hex.EncodeToString(sum[:n])
}

// readStateFile reads the record rel under home: opened within home,
// without following a link at its own name and without blocking (a
// FIFO), and read only as a regular file of at most max bytes.
func readStateFile(home, rel string, max int64) ([]byte, error) {
	if home == "" {
		return nil, os.ErrNotExist
	}
	root, err := os.OpenRoot(home)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > max {
		return nil, fmt.Errorf("codesnap: %s is not a regular file of at most %d bytes", filepath.Join(home, rel), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("codesnap: %s is larger than %d bytes", filepath.Join(home, rel), max)
	}
	return data, err
}

// writeStateFile replaces the record rel under home with data (home and
// rel's directories made 0700 where missing; a temporary file renamed
// into place: a reader sees the old record or the new one), every step
// within home.
func writeStateFile(home, rel string, data []byte) error {
	if home == "" {
		return errors.New("codesnap: no state directory (no home): set XDG_STATE_HOME")
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	root, err := os.OpenRoot(home)
	if err != nil {
		return err
	}
	defer root.Close()
	dir := path.Dir(rel)
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var suffix [8]byte
	rand.Read(suffix[:])
	tmp := path.Join(dir, ".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}
