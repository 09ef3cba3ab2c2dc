//go:build !unix

package isolate

import (
	"fmt"
	"io/fs"
	"os"
)

// linkCount is how many names a file has (1 where the system does not say).
func linkCount(fs.FileInfo) uint64 { return 1 }

// openRegular opens path for reading if it is a regular file.
func openRegular(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.Open(path)
}

// removeLink removes the link at p.
func removeLink(p string) error { return os.Remove(p) }
