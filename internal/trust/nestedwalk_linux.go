package trust

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// nestedGitTops walks the tree under top for `.git` entries with
// getdents(2) itself: only directory entries' names and types are looked
// at, so the cost follows the directories (one open, a few getdents, a
// sort of the subdirectories' names), not the files, of which a
// filepath.WalkDir makes, sorts and drops one os.DirEntry each (at
// 40,000 files: 24 ms of CPU against 9). Entries are visited in WalkDir's
// (lexical) order, so the tops come in the same order.
//
// Nothing below the top is followed: a directory is opened O_NOFOLLOW by
// its full path, and one that turns out to be a link, is gone or cannot be
// read (nor can the user's git read it) is passed over; any other failure
// (a path too long, too many open files) fails the walk, which its callers
// report as not checked.
func nestedGitTops(top string) ([]string, error) {
	w := nestedWalk{buf: make([]byte, 32<<10)}
	if err := w.dir(top, ""); err != nil {
		return nil, err
	}
	return w.tops, nil
}

type nestedWalk struct {
	buf  []byte
	tops []string
}

// dirEntry is one entry of a directory the walk goes on with: a
// subdirectory, or a `.git` of any type.
type dirEntry struct {
	name  string
	isDir bool
}

// dir walks the directory abs (rel below the top, "" for the top).
func (w *nestedWalk) dir(abs, rel string) error {
	ents, err := w.list(abs, rel == "")
	if err != nil {
		if rel != "" && passOver(err) {
			return nil
		}
		return &fs.PathError{Op: "read", Path: abs, Err: err}
	}
	slices.SortFunc(ents, func(a, b dirEntry) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	for _, e := range ents {
		childRel := e.name
		if rel != "" {
			childRel = rel + "/" + e.name
		}
		if e.name == ".git" {
			if rel != "" { // the top's own: GitConfigTops
				w.tops = nestedTopsOf(w.tops, childRel, e.isDir)
			}
			continue
		}
		if err := w.dir(abs+"/"+e.name, childRel); err != nil {
			return err
		}
	}
	return nil
}

// passOver reports whether a directory that fails with err is passed
// over: it is gone, is no directory (any more: a link put in its place),
// or cannot be read.
func passOver(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) ||
		errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// list reads the directory at abs: its subdirectories and its `.git`. The
// top (the parent's own path, resolved or not) is followed if a link.
func (w *nestedWalk) list(abs string, top bool) ([]dirEntry, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if top {
		flags &^= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(abs, flags, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var ents []dirEntry
	for {
		n, err := unix.Getdents(fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return ents, nil
		}
		ents, err = appendEntries(ents, fd, w.buf[:n])
		if err != nil {
			return nil, err
		}
	}
}

// Offsets in a struct linux_dirent64 (the same on every architecture).
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// appendEntries appends the subdirectories and the `.git` among the
// linux_dirent64 records of buf, read from the directory fd.
func appendEntries(ents []dirEntry, fd int, buf []byte) ([]dirEntry, error) {
	for len(buf) > direntName {
		reclen := int(binary.NativeEndian.Uint16(buf[direntReclen:]))
		if reclen <= direntName || reclen > len(buf) {
			return ents, unix.EIO // a record the kernel never writes
		}
		typ, name := buf[direntType], buf[direntName:reclen]
		buf = buf[reclen:]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		if string(name) == "." || string(name) == ".." {
			continue
		}
		if typ == unix.DT_UNKNOWN { // a file system that does not say
			var st unix.Stat_t
			if err := unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				return ents, err
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				typ = unix.DT_DIR
			}
		}
		if typ == unix.DT_DIR || string(name) == ".git" {
			ents = append(ents, dirEntry{name: string(name), isDir: typ == unix.DT_DIR})
		}
	}
	return ents, nil
}
