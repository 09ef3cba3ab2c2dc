package taskdir

import "golang.org/x/sys/unix"

// openat2 resolves path beneath dirfd refusing every symbolic link.
func openat2(dirfd int, path string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	return unix.Openat2(dirfd, path, &how)
}
