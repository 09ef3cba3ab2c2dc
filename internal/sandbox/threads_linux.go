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
// place, instead of re-executing: no_new_privs, the syscall filter
// (filterFor), the domain and the capabilities an exec would have left.
// Threads started later are cloned from restricted ones. Each of these
// reaches every thread before it returns:
//
//   - no_new_privs on this thread, then the filter with
//     SECCOMP_FILTER_FLAG_TSYNC: the kernel installs it on every thread
//     of the process and, since the caller has no_new_privs, sets that on
//     each too (seccomp_sync_threads), or installs it nowhere and names
//     the thread it could not sync. One system call, no stop of the
//     world. Where brood has no filter for the architecture,
//     no_new_privs goes to every thread with AllThreadsSyscall.
//   - the Landlock domain, with syscall.AllThreadsSyscall (the world
//     stopped, the same call on each thread, the program ended if one
//     thread's result differed): this kernel's landlock_restrict_self has
//     no flag for every thread.
//   - the capabilities, one capset on every thread (AllThreadsSyscall):
//     for a non-root user none is left, as an exec would leave none; for
//     root (uid 0 in its user namespace, where the kernel gave it every
//     capability) the permitted and effective sets are cut to keptCaps
//     (and CAP_SETPCAP, out of the bounding set first: capsEveryThread)
//     and the inheritable set emptied. The kernel keeps in the ambient
//     set only what stays both permitted and inheritable, so ambient is
//     emptied too; and under no_new_privs an exec never gives a program
//     a capability its thread had not permitted (cap_bprm_creds_from_file
//     intersects with the old permitted set), so the bounding set need
//     not be cut one capability at a time on every thread (33 stops of
//     the world): what any program can hold is keptCaps at most.
//
// It returns ENOTSUP, having changed nothing, in a binary that links
// runtime/cgo (threads made by C code are out of the runtime's reach).
//
// Each thread gets a domain of its own, siblings (under a read-only
// child's base domain, which holds its scope). That is sound only for a
// layer without scope bits (Restrict re-executes a writer whose domain
// has them, so that every thread shares it), since Landlock's scope
// compares domains: the file-system rules and the TCP ban are the same on
// every thread.
func allThreads(rfd int, p Policy) (seccomp bool, err error) {
	// The filter goes in first, and it is on every thread whether or not
	// AllThreadsSyscall works: ask first where it may not (cgo), so that a
	// refusal has changed nothing.
	if !withoutCgo && !InPlace() {
		return false, unix.ENOTSUP
	}
	prog, seccomp := filterFor(p.metadataFiltered())
	if seccomp {
		err = filterEveryThread(prog)
	} else if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		err = fmt.Errorf("sandbox: no_new_privs on every thread: %w", e)
	}
	if err != nil {
		return false, err
	}
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); e != 0 {
		return false, fmt.Errorf("sandbox: landlock_restrict_self on every thread: %w", e)
	}
	if p.Layer != nil && p.Layer.f != nil { // last: restrictThread
		if _, _, e := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, p.Layer.f.Fd(), 0, 0); e != 0 {
			return false, fmt.Errorf("sandbox: landlock_restrict_self (layer) on every thread: %w", e)
		}
	}
	if err := capsEveryThread(); err != nil {
		return false, err
	}
	return seccomp, nil
}

// filterEveryThread sets no_new_privs on the calling thread and installs
// prog on every thread of the process with SECCOMP_FILTER_FLAG_TSYNC,
// which also sets no_new_privs on each (the caller has it). The kernel
// answers a thread it cannot sync (one under another filter) with that
// thread's id and installs nothing: an error here.
func filterEveryThread(prog []unix.SockFilter) error {
	// The thread must stay the one that set no_new_privs until the filter
	// is in (it is in on every thread then, this one included).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: set no_new_privs: %w", err)
	}
	fp := &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(fp)))
	runtime.KeepAlive(fp)
	runtime.KeepAlive(prog)
	switch {
	case e != 0:
		return fmt.Errorf("sandbox: seccomp filter on every thread (TSYNC): %w", e)
	case r != 0:
		return fmt.Errorf("sandbox: seccomp filter on every thread: thread %d could not take it (another filter); nothing installed", r)
	}
	return nil
}

// capsEveryThread leaves every thread of the process the capabilities a
// confined child may hold (allThreads): none for a non-root user; for
// root keptCaps permitted and effective, and none inheritable (so none
// ambient). Root keeps two more permitted, each after it has left the
// bounding set of every thread, so that no program started from any
// thread gets it (under no_new_privs an exec is bounded by the bounding
// set and the permitted set both):
//
//   - CAP_SETPCAP, effective: a thread that starts a command may still cut
//     its own bounding set to what it is permitted
//     (NoIntrospectionForCommand, dropBoundingThread), so the command sees
//     the bounding set a re-executed child's has. It also keeps a command
//     from ptracing the child that started it (beside the non-dumpable
//     flag and the Landlock scope): without CAP_SYS_PTRACE the kernel's
//     check (cap_ptrace_access_check) wants the tracee's permitted set
//     within the tracer's, and a command never holds CAP_SETPCAP. A
//     compromised child can raise its inheritable set with it, up to its
//     bounding set (which lacks both kept capabilities); no_new_privs,
//     never cleared, keeps that from giving any program more than its
//     thread's permitted set (docs/architecture.md, the trust boundary).
//   - CAP_SYS_ADMIN, permitted only (where the child had it: root in its
//     own user namespace): its own children's PID namespaces need it, as
//     they did when this child kept every capability permitted and
//     effective. No thread uses it but the throw-away one a child of this
//     child is started from, which makes it effective for that start
//     alone (NamespacesOnThread) and dies with it.
//
// Then one capset, the same on every thread: the kernel refuses a thread
// whose permitted set lacks one of them (EPERM), and a result that
// differs between threads ends the program.
func capsEveryThread() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := new([2]unix.CapUserData)
	if os.Geteuid() == 0 {
		keep := uint64(keptCaps)
		// (A drop needs CAP_SETPCAP effective, which its own drop leaves.)
		for _, c := range []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP} {
			_, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0)
			switch e {
			case 0:
				keep |= 1 << c
			case unix.EPERM: // not held: it cannot be kept either
			default:
				return fmt.Errorf("sandbox: drop capability %d from every thread's bounding set: %w", c, e)
			}
		}
		var now [2]unix.CapUserData
		if err := unix.Capget(&hdr, &now[0]); err != nil {
			return fmt.Errorf("sandbox: read capabilities: %w", err)
		}
		for i := range data {
			data[i].Permitted = now[i].Permitted & uint32(keep>>(32*i))
			data[i].Effective = data[i].Permitted &^ uint32(uint64(1<<unix.CAP_SYS_ADMIN)>>(32*i))
		}
	}
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(data)
	if e != 0 {
		return fmt.Errorf("sandbox: cut capabilities on every thread: %w", e)
	}
	return nil
}

// InPlace reports whether this binary can restrict all its threads in
// place (Restrict's "all threads"): false when it links runtime/cgo, where
// an overlay child re-executes itself instead. brood doctor says which.
func InPlace() bool {
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_GETPID, 0, 0, 0)
	return e == 0
}
