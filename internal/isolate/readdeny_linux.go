package isolate

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// coverDenied covers, in a writer's own mount namespace, each path its
// Read deny rules match (ReadDenied): a directory with an empty
// read-only tmpfs (coverEmpty), a file with /dev/null bound over it on a
// nodev mount (coverFile: reading or writing it fails). Its tree's Landlock rule would
// otherwise let it read them. A path that does not exist, or that is a
// symbolic link (its target is in the list too, by its real path), is
// left. A mount point cannot be removed or renamed, and a hard link
// across it is refused (EXDEV).
func coverDenied(paths []string) error {
	for _, p := range paths {
		fd, err := openNoLinks(p)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
			continue
		}
		if err != nil {
			return fmt.Errorf("isolate: open %s to cover it (a Read deny rule matches it): %w", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fmt.Errorf("isolate: stat %s: %w", p, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_RDONLY
			err = unix.Mount("tmpfs", fdPath(fd), "tmpfs", flags, "size=4k,nr_inodes=1,mode=0755")
		case unix.S_IFLNK:
		default:
			err = coverFile(fd, p)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("isolate: cover %s (a Read deny rule matches it): %w", p, err)
		}
	}
	return nil
}

// coverFile binds /dev/null over the file fd opens (at path p), then
// makes that bind nodev, read-only, nosuid and noexec: a device node on a
// nodev mount cannot be opened at all, so a read or a write of the path
// fails with EACCES. A write never "succeeds" into /dev/null, which would
// let a writer report a change it never made (review39 P2-D).
func coverFile(fd int, p string) error {
	if err := unix.Mount("/dev/null", fdPath(fd), "", unix.MS_BIND, ""); err != nil {
		return err
	}
	// fd still names the file beneath; the path now reaches the mount.
	top, err := openNoLinks(p)
	if err != nil {
		return err
	}
	defer unix.Close(top)
	const flags = unix.MS_BIND | unix.MS_REMOUNT | unix.MS_NODEV | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NOEXEC
	return unix.Mount("", fdPath(top), "", flags, "")
}

// coveredAll reports whether each of paths is, in this process's mount
// namespace, absent or covered (coverDenied): a directory that is a
// mount point (another device than its parent's), a file that is
// /dev/null, a link (its target is checked by its own path).
func coveredAll(paths []string) bool {
	for _, p := range paths {
		var st, up unix.Stat_t
		err := unix.Lstat(p, &st)
		switch {
		case errors.Is(err, unix.ENOENT):
			continue
		case err != nil:
			return false
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
		case unix.S_IFCHR:
			if unix.Major(st.Rdev) != 1 || unix.Minor(st.Rdev) != 3 {
				return false
			}
		case unix.S_IFDIR:
			if unix.Lstat(filepath.Dir(p), &up) != nil || up.Dev == st.Dev {
				return false
			}
		default:
			return false
		}
	}
	return true
}
