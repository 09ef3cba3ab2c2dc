//go:build !linux

package taskdir

import "golang.org/x/sys/unix"

// openat2 is Linux's; elsewhere the component-wise O_NOFOLLOW walk is used.
func openat2(int, string, int, uint32) (int, error) { return -1, unix.ENOSYS }
