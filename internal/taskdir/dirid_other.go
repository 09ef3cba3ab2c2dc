//go:build !linux

package taskdir

import "golang.org/x/sys/unix"

// DirIdentity is Linux's (statx's birth time); elsewhere a directory has
// none, and a moved checkout takes nothing over.
func DirIdentity(string) (DirID, bool) { return DirID{}, false }

func renameNoReplace(int, string, int, string) error { return unix.ENOSYS }
