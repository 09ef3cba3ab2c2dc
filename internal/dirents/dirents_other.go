//go:build !linux

package dirents

import (
	"os"
	"path/filepath"
)

// Subdirs returns the subdirectories of the directory at abs and its
// entry named also, of any type (dirents_linux.go reads getdents(2)
// itself). follow lets abs itself be a link.
func Subdirs(abs string, follow bool, buf []byte, also string) ([]Entry, error) {
	var match func([]byte) bool
	if also != "" {
		match = func(name []byte) bool { return string(name) == also }
	}
	return SubdirsFunc(abs, follow, buf, match)
}

// SubdirsFunc is Subdirs keeping, besides the subdirectories, every entry
// whose name also accepts (none when also is nil).
func SubdirsFunc(abs string, follow bool, buf []byte, also func(name []byte) bool) ([]Entry, error) {
	return List(abs, follow, buf, also, false)
}

// List is SubdirsFunc keeping, with links, every symbolic link too, with
// its target.
func List(abs string, follow bool, _ []byte, also func(name []byte) bool, links bool) ([]Entry, error) {
	if !follow {
		if fi, err := os.Lstat(abs); err != nil {
			return nil, err
		} else if fi.Mode()&os.ModeSymlink != 0 {
			return nil, &os.PathError{Op: "open", Path: abs, Err: os.ErrInvalid}
		}
	}
	des, err := os.ReadDir(filepath.Clean(abs))
	if err != nil {
		return nil, err
	}
	var ents []Entry
	for _, d := range des {
		link := d.Type()&os.ModeSymlink != 0
		special := ""
		switch t := d.Type(); {
		case !links:
		case t&os.ModeNamedPipe != 0:
			special = "fifo"
		case t&os.ModeSocket != 0:
			special = "socket"
		case t&os.ModeCharDevice != 0:
			special = "char device"
		case t&os.ModeDevice != 0:
			special = "block device"
		}
		if !d.IsDir() && !(links && link) && special == "" && (also == nil || !also([]byte(d.Name()))) {
			continue
		}
		e := Entry{Name: d.Name(), Dir: d.IsDir(), Link: link, Special: special}
		if links && link {
			t, err := os.Readlink(filepath.Join(abs, d.Name()))
			if err != nil {
				continue // gone since
			}
			e.Target = t
		}
		ents = append(ents, e)
	}
	return ents, nil
}
