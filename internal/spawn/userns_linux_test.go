package spawn_test

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyUserNS has the kernel refuse every new user namespace of this
// process and its children from now on, as a seccomp profile or an LSM
// does where there are none: clone and unshare carrying CLONE_NEWUSER
// fail EPERM (clone3 ENOSYS, which Go and libc fall back from).
func denyUserNS(t *testing.T) {
	const (
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		flags = 16 // seccomp_data.args[0], its low 32 bits (little-endian)
	)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	prog := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, 0), // nr
		jeq(unix.SYS_CLONE3, 0, 1),
		stmt(unix.BPF_RET|unix.BPF_K, nosys),
		jeq(unix.SYS_CLONE, 1, 0),
		jeq(unix.SYS_UNSHARE, 0, 2),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, flags),
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: unix.CLONE_NEWUSER, Jt: 1},
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		stmt(unix.BPF_RET|unix.BPF_K, eperm),
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatalf("no_new_privs: %v", err)
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fp))); errno != 0 {
		t.Fatalf("seccomp: %v", errno)
	}
}
