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

// unixFilter is the BPF program of NoUnixSocketsForCommand: socket(2) of
// AF_UNIX fails with EACCES (socketpair stays), io_uring_setup and every
// syscall of a foreign ABI (i386, x32) with EPERM, so the numbers cannot be
// dodged.
func unixFilter() ([]unix.SockFilter, bool) { return familyFilter(unix.AF_UNIX, false) }
