package temporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxRecord bounds a landing or sent-starts record brood reads back.
const maxRecord = 1 << 20

// A record under the common git dir's brood/fleet/KEY (landed.json,
// sent.json) is a trust input: an in-place writer that could make
// .git/brood a link into the work tree would have the record live where
// later children write (review31 P2-1). So every directory from the
// common git dir down (brood, fleet, KEY) is taken only as itself, a
// directory reached through no link, and the file only as a regular file
// opened without following a link, of bounded size. Anything else is no
// record for a read, and a refused write.

// recordDirs checks dir (COMMON/brood/fleet/KEY, from landDir) and its
// two parents below the common git dir: each a directory, no link. With
// mk, a missing one is made (0700); without, a missing one is
// fs.ErrNotExist.
func recordDirs(dir string, mk bool) error {
	parts := []string{filepath.Dir(filepath.Dir(dir)), filepath.Dir(dir), dir}
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
			return fmt.Errorf("%s is not a directory of brood's own (a link or a file: a child may have made it; remove it)", p)
		}
	}
	return nil
}

// readRecord decodes file, a record under a checked record directory,
// into v: fs.ErrNotExist when it or a directory is missing, another error
// when anything is off (a link, not a regular file, too large, not JSON).
func readRecord(file string, v any) error {
	if err := recordDirs(filepath.Dir(file), false); err != nil {
		return err
	}
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
