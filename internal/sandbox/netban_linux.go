package sandbox

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NoNetworkForCommand takes the network from what the calling thread
// starts next: a tool process of an agent whose definition says
// `network: none` (Bash and everything it starts). The child process
// itself, and its connection to its model, keep theirs: the thread must be
// locked and thrown away after the start (OnThrowawayThread), as for
// NoIntrospectionForCommand.
//
// Two walls, each inherited across fork and exec and impossible to lift:
// a seccomp filter that lets socket(2) make only netlink sockets (never
// IPv4, IPv6, packet, vsock, ..., nor unix: a proxy, docker.sock or an ssh
// agent listening on a path is as good as the network; socketpair(2), the
// pipe between processes, stays allowed) and refuses io_uring (whose
// socket operations a filter cannot see); and, where the kernel has
// Landlock ABI 4, a domain that denies TCP bind and connect. It returns
// what holds, in words, for the tool's result and brood doctor.
func NoNetworkForCommand() (string, error) {
	runtime.LockOSThread() // the caller's throwaway thread; never unlocked
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "", fmt.Errorf("sandbox: no_new_privs for a command without network: %w", err)
	}
	var held []string
	if prog, ok := socketFilter(); ok {
		fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp))); errno != 0 {
			return "", fmt.Errorf("sandbox: seccomp filter for a command without network: %w", errno)
		}
		held = append(held, banHeld)
	}
	if abi := landlockABI(); abi >= 4 {
		rfd, err := buildRuleset(Policy{}, abi, layer{net: true})
		if err != nil {
			return "", err
		}
		defer unix.Close(rfd)
		if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
			return "", fmt.Errorf("sandbox: landlock TCP ban for a command without network: %w", errno)
		}
		held = append(held, "landlock: TCP bind and connect denied")
	}
	if len(held) == 0 {
		return "", fmt.Errorf("sandbox: this kernel or architecture has neither a seccomp filter brood can build nor Landlock ABI 4: a command cannot be kept off the network")
	}
	return strings.Join(held, "; "), nil
}

// NetworkBan says what NoNetworkForCommand would hold on this machine, or
// why it can't (brood doctor).
func NetworkBan() (string, bool) {
	var held []string
	if _, ok := socketFilter(); ok {
		held = append(held, banHeld)
	}
	if landlockABI() >= 4 {
		held = append(held, "landlock: TCP bind and connect denied")
	}
	if len(held) == 0 {
		return "nothing: no seccomp filter for this architecture and no Landlock ABI 4", false
	}
	return strings.Join(held, "; "), true
}

// banHeld is what the seccomp wall holds, in words.
const banHeld = "seccomp: only netlink sockets (no IP, no unix), no io_uring"

// socketFilter is the BPF program of a command without network: socket(2)
// of any family but AF_NETLINK (AF_UNIX included: a pathname socket can be
// a proxy) fails with EACCES, io_uring_setup with EPERM, and every syscall
// of a foreign ABI (i386, x32) with EPERM, so the numbers cannot be
// dodged. socketpair(2) is another syscall and stays allowed (a connected
// pair of unix sockets between processes, reaching nothing outside).
func socketFilter() ([]unix.SockFilter, bool) { return familyFilter(unix.AF_NETLINK, true) }

// familyFilter is the BPF program that refuses socket(2) (EACCES) of every
// family but family (only true) or of family alone (only false), refuses
// io_uring_setup (EPERM: its sockets would pass unseen) and every syscall
// of a foreign ABI (EPERM).
func familyFilter(family uint32, only bool) ([]unix.SockFilter, bool) {
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
	// On the family: skip the refusal (only) or fall into it (not only).
	onFamily, otherwise := uint8(1), uint8(0)
	if !only {
		onFamily, otherwise = 0, 1
	}
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
		jump(family, onFamily, otherwise),
		stmt(ret, refused),
		stmt(ret, allow),
	}, true
}
