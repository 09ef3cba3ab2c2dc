package temporal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// writePrivate writes a private key, never readable by others: to a
// temporary file, then onto path. Unless replace it never replaces a key
// already there (link(2) fails with fs.ErrExist): two workers of one
// account starting together each make a key, and the one that comes
// second takes the first's instead of signing with a key no file keeps.
func writePrivate(path string, data []byte, replace bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if replace {
		return os.Rename(f.Name(), path)
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: made meanwhile by another process: %w", path, fs.ErrExist)
		}
		return err
	}
	return nil
}

// strictFile refuses a file of trusted keys that another local account
// could change (as sshd's StrictModes does for authorized_keys): the file
// or its directory writable by group or others (a sticky directory, such
// as /tmp, excepted for the directory), or either not owned by this
// process's user.
func strictFile(path string) error {
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && int(st.Uid) != os.Getuid() {
			return fmt.Errorf("%s: owned by uid %d, not this worker's user (uid %d), who alone may say whom it trusts: chown %d %s, or remove it", p, st.Uid, os.Getuid(), os.Getuid(), p)
		}
		if fi.Mode().Perm()&0o022 != 0 && (p == path || fi.Mode()&os.ModeSticky == 0) {
			return fmt.Errorf("%s: writable by group or others (mode %v), who could add a key this worker trusts: chmod go-w %s", p, fi.Mode().Perm(), p)
		}
	}
	return nil
}
