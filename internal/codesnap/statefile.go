package codesnap

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path"
	"path/filepath"

	"github.com/broodhq/brood/internal/taskdir"
)

// The submitter's records of a checkout (the dirty pack chain, the
// capture index) live in the user's state directory of the checkout,
// taskdir.CheckoutDir of its common git dir with links followed: outside
// every tree a child writes and hidden from every child Landlock
// confines, never under the git dir, which an in-place writer nothing
// holds writes (review34 P2-1). Each is read and written through
// taskdir's state records, as the fleet's records are: no link at any
// name from the state directory's checkouts/ down, a regular file of
// bounded size, written tmp+rename.

// stateFile is where the record name under dir (slash-separated) of the
// checkout whose common git dir is common lives: rel (H/dir/name) under
// home, the state directory's checkouts/. "", "" without a home (or
// common unresolvable): no record is kept.
func stateFile(common, dir, name string) (home, rel string) {
	real, err := filepath.EvalSymlinks(common)
	if err != nil {
		return "", ""
	}
	h := taskdir.CheckoutDir(real)
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

// readStateFile reads the record rel under home, of at most max bytes
// (taskdir.ReadStateFile).
func readStateFile(home, rel string, max int64) ([]byte, error) {
	if home == "" {
		return nil, os.ErrNotExist
	}
	return taskdir.ReadStateFile(filepath.Join(home, filepath.FromSlash(rel)), max)
}

// writeStateFile replaces the record rel under home with data
// (taskdir.WriteStateFile; not synced: a record lost costs the next
// capture its head start, nothing more).
func writeStateFile(home, rel string, data []byte) error {
	if home == "" {
		return errors.New("codesnap: no state directory (no home): set XDG_STATE_HOME")
	}
	return taskdir.WriteStateFile(filepath.Join(home, filepath.FromSlash(rel)), data, false)
}
