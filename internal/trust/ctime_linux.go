package trust

import "golang.org/x/sys/unix"

// changedSince returns those of names, entries of the directory dir, whose
// ctime is at or after since (ns): one fstatat each from the directory's
// handle, no path resolved again. An entry gone is left out.
func changedSince(dir string, names []string, since int64) []string {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var out []string
	var st unix.Stat_t
	for _, n := range names {
		if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		if sec, nsec := st.Ctim.Unix(); sec*1e9+nsec >= since {
			out = append(out, n)
		}
	}
	return out
}

// stampPack is the identity of the file at path (no link followed) and
// its last 32 bytes.
func stampPack(path string) (packStamp, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return packStamp{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return packStamp{}, false
	}
	sec, nsec := st.Ctim.Unix()
	s := packStamp{ino: int64(st.Ino), size: st.Size, ctime: sec*1e9 + nsec}
	n := min(st.Size, 32)
	s.trailer = make([]byte, n)
	if k, err := unix.Pread(fd, s.trailer, st.Size-n); err != nil || int64(k) != n {
		return packStamp{}, false
	}
	return s, true
}
