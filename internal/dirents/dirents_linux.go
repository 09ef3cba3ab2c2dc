package dirents

import (
	"encoding/binary"
	"errors"
	"slices"

	"golang.org/x/sys/unix"
)

// Offsets in a struct linux_dirent64 (the same on every architecture).
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// Subdirs returns the subdirectories of the directory at abs and its
// entry named also, of any type (none when also is ""), in the order
// getdents(2) gives them, reading buf-sized batches of entries: names
// and types only (a file system that gives no type is asked with
// fstatat). follow lets abs itself be a link; otherwise a link there
// fails (ENOTDIR).
func Subdirs(abs string, follow bool, buf []byte, also string) ([]Entry, error) {
	var match func([]byte) bool
	if also != "" {
		match = func(name []byte) bool { return string(name) == also }
	}
	return SubdirsFunc(abs, follow, buf, match)
}

// SubdirsFunc is Subdirs keeping, besides the subdirectories, every entry
// whose name also accepts (none when also is nil). also must not keep
// the name it is given.
func SubdirsFunc(abs string, follow bool, buf []byte, also func(name []byte) bool) ([]Entry, error) {
	return List(abs, follow, buf, also, false)
}

// List is SubdirsFunc keeping, with links, every symbolic link too, with
// its target read beside the directory's descriptor (readlinkat: the one
// call per link; no other entry is stat'ed). A link whose target cannot
// be read (gone since) is left out.
func List(abs string, follow bool, buf []byte, also func(name []byte) bool, links bool) ([]Entry, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if follow {
		flags &^= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(abs, flags, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var ents []Entry
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return ents, nil
		}
		if ents, err = appendEntries(ents, fd, buf[:n], also, links); err != nil {
			return nil, err
		}
	}
}

// appendEntries appends the subdirectories, the entries also accepts and
// (links) the symbolic links among the linux_dirent64 records of buf,
// read from the directory fd.
func appendEntries(ents []Entry, fd int, buf []byte, also func([]byte) bool, links bool) ([]Entry, error) {
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
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue // gone since
				}
				return ents, err
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				typ = unix.DT_DIR
			case unix.S_IFLNK:
				typ = unix.DT_LNK
			case unix.S_IFIFO:
				typ = unix.DT_FIFO
			case unix.S_IFSOCK:
				typ = unix.DT_SOCK
			case unix.S_IFCHR:
				typ = unix.DT_CHR
			case unix.S_IFBLK:
				typ = unix.DT_BLK
			}
		}
		link := links && typ == unix.DT_LNK
		special := ""
		if links {
			special = specialTypes[typ]
		}
		if typ != unix.DT_DIR && !link && special == "" && (also == nil || !also(name)) {
			continue
		}
		e := Entry{Name: string(name), Dir: typ == unix.DT_DIR, Link: typ == unix.DT_LNK, Special: specialTypes[typ]}
		if link {
			t, err := readlinkat(fd, e.Name)
			switch {
			case errors.Is(err, unix.EINVAL) && isDirAt(fd, e.Name):
				e = Entry{Name: e.Name, Dir: true} // a directory in its place since: walked (review24 P3-1)
			case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL):
				continue // gone, or a file in its place since
			case err != nil:
				return ents, err
			}
			e.Target = t
		}
		ents = append(ents, e)
	}
	return ents, nil
}

// specialTypes names the entry types List with links keeps as Special.
var specialTypes = map[uint8]string{unix.DT_FIFO: "fifo", unix.DT_SOCK: "socket", unix.DT_CHR: "char device", unix.DT_BLK: "block device"}

// isDirAt reports whether name in the directory fd is a directory (not
// followed).
func isDirAt(fd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// readlinkat reads the target of the link name in the directory fd.
func readlinkat(fd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		b := make([]byte, size)
		n, err := unix.Readlinkat(fd, name, b)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:n]), nil
		}
	}
}
