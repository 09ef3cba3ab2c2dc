//go:build unix

package isolate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// linkCount is how many names a file has (1 where the system does not say).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// openRegular opens path for reading if it is a regular file, following
// no link at its end and never blocking on a FIFO.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// removeLink removes the link at p. Where its directory denies that (a
// writer took its write bit away) and the directory is this user's, the
// owner's write bit is given for the removal and the mode put back.
func removeLink(p string) error {
	err := os.Remove(p)
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	dir := filepath.Dir(p)
	fi, serr := os.Lstat(dir)
	if serr != nil || !fi.IsDir() || fi.Mode().Perm()&0o200 != 0 {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return err
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
	if os.Chmod(dir, mode|0o200) != nil {
		return err
	}
	defer os.Chmod(dir, mode)
	return os.Remove(p)
}
