package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// allThreads puts every thread of this process under the ruleset rfd in
// place, with syscall.AllThreadsSyscall (the world stopped, the same system
// call on each thread, the program ended if one thread's result differed),
// instead of re-executing: no_new_privs, the domain, the capabilities a
// mount needed (ambient cleared on
// every thread and, for a non-root user, every capability dropped, as an
// exec would, and for root every capability outside keptCaps dropped from
// the bounding set, before the process can fork: dropBoundingBeforeFork),
// and the syscall filter (filterFor). Threads started
// later are cloned from restricted ones.
// It returns ENOTSUP, having changed nothing, in a binary that links
// runtime/cgo (threads made by C code are out of the runtime's reach).
//
// Each thread gets a domain of its own, siblings under the parent's base
// domain. That is sound only for a layer without scope bits (BaseForChild
// keeps the scope in the one domain every thread shares), since Landlock's
// scope compares domains, and the file-system rules are the same on every
// thread.
func allThreads(rfd int, p Policy) (seccomp bool, err error) {
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return false, e
	}
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); e != 0 {
		return false, fmt.Errorf("sandbox: landlock_restrict_self on every thread: %w", e)
	}
	if os.Geteuid() == 0 {
		if _, _, e := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
			return false, fmt.Errorf("sandbox: clear ambient capabilities on every thread: %w", e)
		}
	} else {
		// What the re-exec gave a non-root child: no capability left. The
		// kernel keeps in the ambient set only what stays both permitted
		// and inheritable, so this one call empties it too.
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		data := new([2]unix.CapUserData)
		_, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
		runtime.KeepAlive(data)
		if e != 0 {
			return false, fmt.Errorf("sandbox: drop capabilities on every thread: %w", e)
		}
	}
	dropBoundingBeforeFork()
	prog, ok := filterFor(p.metadataFiltered())
	if !ok {
		return false, nil
	}
	fp := &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(fp)))
	runtime.KeepAlive(fp)
	runtime.KeepAlive(prog)
	if e != 0 {
		return false, fmt.Errorf("sandbox: seccomp filter on every thread: %w", e)
	}
	return true, nil
}

// InPlace reports whether this binary can restrict all its threads in
// place (Restrict's "all threads"): false when it links runtime/cgo, where
// an overlay child re-executes itself instead. brood doctor says which.
func InPlace() bool {
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_GETPID, 0, 0, 0)
	return e == 0
}
