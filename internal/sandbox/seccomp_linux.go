package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// metadataNote is what a read-only child's Status says the syscall filter
// holds.
const metadataNote = "seccomp: chmod, chown, utimes, xattrs and chattr denied"

// Inode flag ioctls (chattr): +i and +a change a file without writing it.
const (
	fsIocSetflags   = 0x40086602
	fsIocSetflags32 = 0x40046602
	fsIocFssetxattr = 0x401c5820
)

// metadataFilter is the BPF program a read-only child runs under: every
// syscall that changes a file's metadata without opening it for writing
// (which Landlock does not cover) fails with EPERM, and so does every one a
// writer may not make either (filterFor). Syscalls of a foreign ABI (i386,
// x32) fail too, so the numbers cannot be dodged.
func metadataFilter() ([]unix.SockFilter, bool) { return filterFor(true) }

// setIDBits are the set-user-ID and set-group-ID bits of a file mode: no
// confined child may set them (a root writer would leave a setuid-root
// program in the work tree for the next local user to run).
const setIDBits = 0o6000

// createBits are the open flags under which the kernel reads the mode
// argument (O_CREAT, and O_TMPFILE's own bit).
const createBits = unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)

// modeArg says where a syscall takes a file mode: the index of its mode
// argument and, for the open family, of its flags (the mode counts only
// under createBits; -1 where it always counts).
type modeArg struct{ nr, mode, flags int }

// filterFor is the syscall filter of a confined child: the calls no
// confined child may make (confinedSyscalls), any call newer than the
// table (lastReviewed: ENOSYS), a mode carrying setIDBits
// (modeSyscalls), openat2 (its mode is in a struct the filter cannot read:
// ENOSYS makes libc and Go fall back to openat) and, for a read-only one,
// the metadata calls and chattr's ioctls too.
func filterFor(readOnly bool) ([]unix.SockFilter, bool) {
	if len(metadataSyscalls()) == 0 {
		return nil, false
	}
	nrs := confinedSyscalls()
	if readOnly {
		nrs = append(nrs, metadataSyscalls()...)
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		allow = unix.SECCOMP_RET_ALLOW
		// struct seccomp_data: nr (0), arch (4), ip (8), args[6] (16).
		offNR, offArch, offArg1 = 0, 4, 24
	)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: jeq, Jt: jt, Jf: jf, K: k}
	}
	prog := []unix.SockFilter{
		stmt(ld, offArch),
		jump(nativeArch, 1, 0),
		stmt(ret, deny),
		stmt(ld, offNR),
		{Code: jge, Jt: 0, Jf: 1, K: 0x40000000}, // x32 numbers
		stmt(ret, deny),
		{Code: jge, Jt: 0, Jf: 1, K: lastReviewed + 1}, // calls newer than the table
		stmt(ret, nosys),
	}
	for _, nr := range nrs {
		prog = append(prog, jump(uint32(nr), 0, 1), stmt(ret, deny))
	}
	prog = append(prog, modeFilter()...)
	if !readOnly {
		return append(prog, stmt(ret, allow)), true
	}
	prog = append(prog,
		jump(unix.SYS_IOCTL, 0, 5),
		stmt(ld, offArg1), // the request's low 32 bits (little endian)
		jump(fsIocSetflags, 2, 0),
		jump(fsIocSetflags32, 1, 0),
		jump(fsIocFssetxattr, 0, 1),
		stmt(ret, deny),
		stmt(ret, allow),
	)
	return prog, true
}

// modeFilter is the part of filterFor that refuses setIDBits in a mode
// (modeSyscalls) and answers openat2 with ENOSYS. It starts and ends with
// the syscall number loaded.
func modeFilter() []unix.SockFilter {
	const (
		ld      = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys   = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		offNR   = 0
		offArgs = 16 // args[i] at 16+8i; its low 32 bits first (little endian)
	)
	arg := func(i int) uint32 { return uint32(offArgs + 8*i) }
	var prog []unix.SockFilter
	for _, m := range modeSyscalls() {
		// Each block jumps to its own end (the next block) when the call
		// is another one or its mode is harmless.
		if m.flags < 0 {
			prog = append(prog,
				unix.SockFilter{Code: ld, K: offNR},
				unix.SockFilter{Code: jeq, Jt: 0, Jf: 3, K: uint32(m.nr)},
				unix.SockFilter{Code: ld, K: arg(m.mode)},
				unix.SockFilter{Code: jset, Jt: 0, Jf: 1, K: setIDBits},
				unix.SockFilter{Code: ret, K: deny})
			continue
		}
		prog = append(prog,
			unix.SockFilter{Code: ld, K: offNR},
			unix.SockFilter{Code: jeq, Jt: 0, Jf: 5, K: uint32(m.nr)},
			unix.SockFilter{Code: ld, K: arg(m.flags)},
			unix.SockFilter{Code: jset, Jt: 0, Jf: 3, K: createBits},
			unix.SockFilter{Code: ld, K: arg(m.mode)},
			unix.SockFilter{Code: jset, Jt: 0, Jf: 1, K: setIDBits},
			unix.SockFilter{Code: ret, K: deny})
	}
	if len(prog) == 0 {
		return nil
	}
	return append(prog,
		unix.SockFilter{Code: ld, K: offNR},
		unix.SockFilter{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_OPENAT2},
		unix.SockFilter{Code: ret, K: nosys})
}

// othersArg is a call that takes another process's id (othersSyscalls):
// nr and which check of its arguments holds it to the caller's own.
type othersArg struct{ nr, kind int }

const (
	// othersLimit: prlimit64(pid, resource, new, old) with a new limit is
	// refused for any pid but 0 (the caller): under a cgroup, the child's
	// uid names every process of the user (as root: every root daemon),
	// and `prlimit --pid P --cpu=1:1` kills P (red team 21 P1-2). Reading
	// a limit (new NULL) stays allowed, as /proc/P/limits is.
	othersLimit = iota
	// othersPrio: setpriority and ioprio_set(which, who, ...) are refused
	// for who other than 0 (the caller, its group) and for which the
	// user (PRIO_USER, IOPRIO_WHO_USER: every process of the uid).
	othersPrio
)

// prioUser and ioprioWhoUser are the "which" of setpriority and
// ioprio_set that name every process of a user.
const (
	prioUser      = 2 // PRIO_USER
	ioprioWhoUser = 3 // IOPRIO_WHO_USER
)

// OwnProcessForCommand puts the calling thread, when it is under
// no_new_privs (a confined child's: its own brood process sets its
// children's limits, pool.hold, so the rule is its commands'), under a
// filter that holds othersSyscalls to the caller (othersFilter), for a
// command a child runs for the model (StartCommandWith: Bash, its hooks
// and MCP servers), which keeps it across every exec. Elsewhere (a root's
// own commands) it changes nothing. As with RestrictForChild, the thread
// must be locked and must die afterwards.
func OwnProcessForCommand() error {
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		return nil
	}
	prog := ownProcessFilter()
	if len(prog) == 0 {
		return nil
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp))); errno != 0 {
		return fmt.Errorf("sandbox: seccomp filter for a command (other processes' limits): %w", errno)
	}
	return nil
}

// ownProcessFilter is OwnProcessForCommand's program: a foreign ABI's
// calls and othersFilter's are EPERM, the rest is left to the filters
// beside it. Nil where brood knows no syscall table.
func ownProcessFilter() []unix.SockFilter {
	body := othersFilter()
	if len(body) == 0 {
		return nil
	}
	prog := append([]unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}, // arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, Jf: 0, K: nativeArch},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}, body...)
	return append(prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW})
}

// othersFilter is OwnProcessForCommand's rules: it holds othersSyscalls
// to the caller. It loads the syscall number first and leaves it loaded.
func othersFilter() []unix.SockFilter {
	const (
		ld      = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		offNR   = 0
		offArgs = 16 // args[i] at 16+8i; its low 32 bits first (little endian)
	)
	lo := func(i int) uint32 { return uint32(offArgs + 8*i) }
	hi := func(i int) uint32 { return uint32(offArgs + 8*i + 4) }
	var prog []unix.SockFilter
	for _, o := range othersSyscalls() {
		// Each block jumps to its own end (the next block) when the call
		// is another one or names the caller.
		switch o.kind {
		case othersLimit:
			prog = append(prog,
				unix.SockFilter{Code: ld, K: offNR},
				unix.SockFilter{Code: jeq, Jt: 0, Jf: 7, K: uint32(o.nr)},
				unix.SockFilter{Code: ld, K: lo(0)}, // pid (an int: the low half)
				unix.SockFilter{Code: jeq, Jt: 5, Jf: 0, K: 0},
				unix.SockFilter{Code: ld, K: lo(2)}, // the new limit's pointer
				unix.SockFilter{Code: jeq, Jt: 0, Jf: 2, K: 0},
				unix.SockFilter{Code: ld, K: hi(2)},
				unix.SockFilter{Code: jeq, Jt: 1, Jf: 0, K: 0},
				unix.SockFilter{Code: ret, K: deny})
		case othersPrio:
			user := uint32(prioUser)
			if o.nr == unix.SYS_IOPRIO_SET {
				user = ioprioWhoUser
			}
			prog = append(prog,
				unix.SockFilter{Code: ld, K: offNR},
				unix.SockFilter{Code: jeq, Jt: 0, Jf: 5, K: uint32(o.nr)},
				unix.SockFilter{Code: ld, K: lo(0)}, // which
				unix.SockFilter{Code: jeq, Jt: 2, Jf: 0, K: user},
				unix.SockFilter{Code: ld, K: lo(1)}, // who
				unix.SockFilter{Code: jeq, Jt: 1, Jf: 0, K: 0},
				unix.SockFilter{Code: ret, K: deny})
		}
	}
	if len(prog) > 0 {
		prog = append(prog, unix.SockFilter{Code: ld, K: offNR})
	}
	return prog
}

// installFilter puts the calling thread under filterFor(readOnly). The
// thread must already have no_new_privs. Without TSYNC on purpose: like the
// Landlock domain, it is for the thread a child is started from (and for
// the image a child re-executes into), never the parent's other threads.
func installFilter(readOnly bool) (bool, error) {
	prog, ok := filterFor(readOnly)
	if !ok {
		return false, nil
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp))); errno != 0 {
		return false, fmt.Errorf("sandbox: seccomp filter: %w", errno)
	}
	return true, nil
}
