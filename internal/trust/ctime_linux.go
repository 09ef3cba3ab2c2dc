package trust

import "syscall"

// ctime is path's status change time in nanoseconds (a utimes, unlike the
// modification time, cannot set it back).
func ctime(path string) (int64, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return 0, false
	}
	sec, nsec := st.Ctim.Unix()
	return sec*1e9 + nsec, true
}
