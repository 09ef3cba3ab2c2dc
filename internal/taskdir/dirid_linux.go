package taskdir

import "golang.org/x/sys/unix"

// DirIdentity is the identity of the directory at path (its last name
// not followed if a link): its file system's id (statfs's f_fsid, which
// ext4 and btrfs derive from the file system's UUID, so it survives a
// reboot where a device number may not: btrfs numbers its subvolumes at
// mount; the device number where the file system gives no id), inode and
// birth time. ok false where it is none, or the file system keeps no
// birth time (or a zero one: a directory an image builder made).
func DirIdentity(path string) (id DirID, ok bool) {
	var st unix.Statx_t
	const want = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_BTIME
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, want, &st) != nil || st.Mask&want != want || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return DirID{}, false
	}
	birth := st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	if birth == 0 {
		return DirID{}, false
	}
	var fs unix.Statfs_t
	if unix.Statfs(path, &fs) != nil {
		return DirID{}, false
	}
	fsid := uint64(uint32(fs.Fsid.Val[0]))<<32 | uint64(uint32(fs.Fsid.Val[1]))
	if fsid == 0 {
		fsid = unix.Mkdev(st.Dev_major, st.Dev_minor)
	}
	return DirID{FS: fsid, Ino: st.Ino, Birth: birth}, true
}

// renameNoReplace renames old in olddir to new in newdir, never over
// anything there.
func renameNoReplace(olddir int, old string, newdir int, new string) error {
	return unix.Renameat2(olddir, old, newdir, new, unix.RENAME_NOREPLACE)
}
