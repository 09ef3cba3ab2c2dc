package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// syscallsNote is what a confined child's Status says its syscall filter
// denies beyond file metadata.
const syscallsNote = "seccomp: mount, module, kexec, bpf, perf, io_uring and keyring syscalls, other processes' limits and memory, and setuid/setgid modes denied"

// capsNote is what a confined child's Status says of its capabilities when
// it runs as root: the bounding set cut (a child started from a confined
// thread, or re-executed from one), or the permitted set under
// no_new_privs (allThreads); either way no program it starts holds more.
const capsNote = "capabilities cut to file ownership, kill and setuid/setgid"

// keptCaps are the capabilities a confined child's programs may still hold
// when brood runs as root: what tar, cp -p and a test's own setuid need.
// Everything else (CAP_SYS_ADMIN, CAP_SYS_MODULE, CAP_MKNOD, CAP_NET_ADMIN,
// CAP_SYS_RAWIO, CAP_SYS_RESOURCE, ...) leaves the bounding set, so an exec
// never gives it back. CAP_FSETID leaves it too: without it the kernel
// clears a file's set-user-ID and set-group-ID bits when the child writes
// or chowns it, and refuses a set-group-ID bit for a group it is not in.
const keptCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH |
	1<<unix.CAP_FOWNER | 1<<unix.CAP_KILL | 1<<unix.CAP_SETGID |
	1<<unix.CAP_SETUID | 1<<unix.CAP_NET_BIND_SERVICE

// lastCap bounds the capability numbers tried; the kernel answers EINVAL
// past its own last one.
const lastCap = 63

// dropBoundingAll drops every capability outside keptCaps from the
// bounding set of every thread of this process (root only: a non-root
// child holds none). It returns ENOTSUP in a binary with cgo.
func dropBoundingAll() error {
	if os.Geteuid() != 0 {
		return nil
	}
	if !InPlace() {
		return unix.ENOTSUP
	}
	return dropBoundingEveryThread()
}

// dropBoundingEveryThread is dropBoundingAll for a root process known to
// be able to (AllThreadsSyscall works): one stop of the world per
// capability, about 33 of them.
func dropBoundingEveryThread() error {
	for c := uintptr(0); c <= lastCap; c++ {
		if keptCaps&(1<<c) != 0 {
			continue
		}
		_, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0)
		if e == unix.EINVAL {
			break
		}
		if e != 0 && e != unix.EPERM {
			return fmt.Errorf("sandbox: drop capability %d on every thread: %w", c, e)
		}
	}
	return nil
}

// dropBoundingThread is dropBoundingAll for the calling thread only (the
// thread a child is started from, or the one a re-exec starts from),
// keeping extra too (a writer's re-exec: reexecKeeps).
func dropBoundingThread(extra uint64) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for c := uintptr(0); c <= lastCap; c++ {
		if (keptCaps|extra)&(1<<c) != 0 {
			continue
		}
		err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break
		}
		if err != nil && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("sandbox: drop capability %d: %w", c, err)
		}
	}
	return nil
}

// clearInheritableThread empties the calling thread's inheritable set,
// keeping its permitted and effective sets.
func clearInheritableThread() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: read capabilities: %w", err)
	}
	if data[0].Inheritable == 0 && data[1].Inheritable == 0 {
		return nil
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: clear inheritable capabilities: %w", err)
	}
	return nil
}

// capsStatus says what a confined child's capabilities are.
func capsStatus(dropped bool) string {
	switch {
	case os.Geteuid() != 0:
		return ""
	case dropped:
		return capsNote
	}
	return "root's capabilities kept (a binary with cgo cannot drop them on every thread)"
}

// hasSysAdmin reports whether the calling thread holds CAP_SYS_ADMIN in
// its permitted set (effective, or permitted only: a root child confined
// in place, capsEveryThread, which makes it effective on the thread a
// start needs it on, NamespacesOnThread). Where it does not (a root child
// confined by re-executing), a namespace needs a user namespace of its own.
func hasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Permitted&(1<<unix.CAP_SYS_ADMIN) != 0
}

// nsFlags are the clone flags of a namespace other than a user namespace:
// each needs CAP_SYS_ADMIN in the caller's user namespace.
const nsFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
	syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP

// NamespacesOnThread readies the calling thread to start cmd: where cmd
// asks for namespaces without a user namespace of its own (AddNamespaces
// for root) and the thread holds CAP_SYS_ADMIN permitted but not
// effective (a root child confined in place, capsEveryThread), it makes
// it effective on this thread alone, for the clone. The program started
// gets none of it: CAP_SYS_ADMIN left every thread's bounding set, and
// under no_new_privs an exec gives nothing outside it. The thread must be
// locked and must die after the start (OnThrowawayThread), as for
// RestrictForChild: no other code runs with it.
func NamespacesOnThread(cmd *exec.Cmd) error {
	a := cmd.SysProcAttr
	if a == nil || a.Cloneflags&nsFlags == 0 || a.Cloneflags&syscall.CLONE_NEWUSER != 0 || os.Geteuid() != 0 {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: read capabilities: %w", err)
	}
	const admin = 1 << unix.CAP_SYS_ADMIN
	if data[0].Permitted&admin == 0 || data[0].Effective&admin != 0 {
		return nil
	}
	data[0].Effective |= admin
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: CAP_SYS_ADMIN for a start in new namespaces: %w", err)
	}
	return nil
}

// fill sets what a confined child's filter and capabilities hold.
func (s *Status) fill(p Policy, seccomp, capsDropped bool) {
	s.Metadata = metadataStatus(p, seccomp)
	s.Syscalls = "not filtered by the kernel on this architecture (no seccomp table)"
	if seccomp {
		s.Syscalls = syscallsNote
	}
	s.Caps = capsStatus(capsDropped)
}

// FilterAvailable reports whether brood knows this architecture's syscall
// table, so that confined children get their syscall filter.
func FilterAvailable() bool { return len(metadataSyscalls()) > 0 }
