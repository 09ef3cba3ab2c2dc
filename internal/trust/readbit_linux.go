package trust

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// giveReadBack adds the owner's read bit to the directory at abs when
// the process owns it, and reports whether it did. The directory is
// opened first with no link followed, and changed through that handle: a
// link put in its place is not followed.
func giveReadBack(abs string) bool {
	fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != os.Geteuid() {
		return false
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), st.Mode&0o7777|0o400) == nil
}

// ownDir reports whether the directory at abs (not followed) is this
// process's user's.
func ownDir(abs string) bool {
	var st unix.Stat_t
	return unix.Lstat(abs, &st) == nil && int(st.Uid) == os.Geteuid()
}
