package taskdir

import "golang.org/x/sys/unix"

// DirIdentity is the identity of the directory at path (its last name
// not followed if a link): ok false where it is none, or the file system
// keeps no birth time.
func DirIdentity(path string) (id DirID, ok bool) {
	var st unix.Statx_t
	const want = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_BTIME
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, want, &st) != nil || st.Mask&want != want || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return DirID{}, false
	}
	return DirID{Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino, Birth: st.Btime.Sec*1e9 + int64(st.Btime.Nsec)}, true
}

// renameNoReplace renames old in olddir to new in newdir, never over
// anything there.
func renameNoReplace(olddir int, old string, newdir int, new string) error {
	return unix.Renameat2(olddir, old, newdir, new, unix.RENAME_NOREPLACE)
}
