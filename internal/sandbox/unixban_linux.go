package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// unixBanHeld is what the unix-socket wall holds, in words.
const unixBanHeld = "seccomp: no unix sockets (socketpair stays), no io_uring"

// NoUnixSocketsForCommand takes unix sockets from what the calling thread
// starts next (a child's tool process, which keeps the network): a
// pathname socket is a door out of every file rule (Landlock does not
// mediate connect(2) to one): docker.sock, the systemd user manager or the
// D-Bus session bus (`systemd-run --user`), an ssh or gpg agent act for
// the child, unconfined, and what they start outlives it. socket(2) of
// AF_UNIX fails with EACCES and io_uring_setup with EPERM (its socket
// operations a filter cannot see); socketpair(2), the pipe between
// processes (libuv's, Python's), stays allowed. The thread must be locked
// and thrown away after the start (OnThrowawayThread), as for
// NoNetworkForCommand.
func NoUnixSocketsForCommand() (string, error) {
	prog, ok := unixFilter()
	if !ok {
		return "", fmt.Errorf("sandbox: no seccomp filter for this architecture: a command cannot be kept from unix sockets")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "", fmt.Errorf("sandbox: no_new_privs for a command without unix sockets: %w", err)
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp))); errno != 0 {
		return "", fmt.Errorf("sandbox: seccomp filter for a command without unix sockets: %w", errno)
	}
	return unixBanHeld, nil
}

// unixFilter is the BPF program of NoUnixSocketsForCommand; syscalls of a
// foreign ABI (i386, x32) fail with EPERM, so the numbers cannot be
// dodged.
func unixFilter() ([]unix.SockFilter, bool) {
	if nativeArch == 0 {
		return nil, false
	}
	const (
		ld      = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge     = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		refused = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		allow   = unix.SECCOMP_RET_ALLOW
		// struct seccomp_data: nr (0), arch (4), ip (8), args[6] (16).
		offNR, offArch, offArg0 = 0, 4, 16
	)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(k uint32, jt, jf uint8) unix.SockFilter { return unix.SockFilter{Code: jeq, Jt: jt, Jf: jf, K: k} }
	return []unix.SockFilter{
		stmt(ld, offArch),
		jump(nativeArch, 1, 0),
		stmt(ret, deny),
		stmt(ld, offNR),
		{Code: jge, Jt: 0, Jf: 1, K: 0x40000000}, // x32 numbers
		stmt(ret, deny),
		jump(unix.SYS_IO_URING_SETUP, 0, 1),
		stmt(ret, deny),
		jump(unix.SYS_SOCKET, 1, 0),
		stmt(ret, allow),
		stmt(ld, offArg0), // the family (an int: the low 32 bits)
		jump(unix.AF_UNIX, 0, 1),
		stmt(ret, refused),
		stmt(ret, allow),
	}, true
}
