package spawn

import (
	"fmt"
	"os"
	"syscall"
)

// indexStamp is the index file's identity and times (a change time
// cannot be set back): an index whose stamp did not move has the bits it
// had.
func indexStamp(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprint(st.Dev, st.Ino, st.Size, st.Mtim, st.Ctim), true
}
