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
