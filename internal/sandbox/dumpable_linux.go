package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"golang.org/x/sys/unix"
)

// dumpableMu serialises changes to the dumpable flag, which the kernel
// keeps once per process (not per thread, nor per pool): the one piece of
// process-wide state here, because the kernel's is process-wide. A change
// (Undumpable, a start that makes the process dumpable for its span)
// holds it for writing; a start that needs no change holds it for
// reading, so the flag it found holds until its child has exec'd, and
// such starts run side by side.
var dumpableMu sync.RWMutex

// Undumpable makes this process non-dumpable (PR_SET_DUMPABLE 0): a
// process of the same uid without CAP_SYS_PTRACE over it (a sibling child,
// or anything a sibling starts) can no longer ptrace it or open its
// /proc/PID/mem and /proc/PID/environ, and it leaves no core. A brood child
// calls it first thing; exec resets the flag, so a child that re-executes
// itself (under Landlock) calls it again from the top.
func Undumpable() error {
	dumpableMu.Lock()
	defer dumpableMu.Unlock()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: PR_SET_DUMPABLE: %w", err)
	}
	return nil
}

// StartMapped runs start, which starts cmd. When cmd gets a user namespace
// whose id maps this process writes (a non-root pool's PID namespace), the
// new process must be dumpable until it execs: it inherits the flag at the
// fork, and the kernel makes a non-dumpable process's /proc/PID/uid_map
// root's, which this user may not write. So a non-dumpable process is
// dumpable for the span of that one start (the fork, the maps, the exec),
// and never otherwise. Where this process may not write under /proc at
// all (a confined child: its Landlock domain has no rule there), no start
// could write the maps: it fails at once, and the process is never made
// dumpable for it. In a dumpable process (a root brood) nothing changes,
// and its starts do not wait for one another (at K=16 they queued here for
// 58 ms each, a whole fork and exec apiece).
func StartMapped(cmd *exec.Cmd, start func() error) error {
	a := cmd.SysProcAttr
	if a == nil || (len(a.UidMappings) == 0 && len(a.GidMappings) == 0) {
		return start()
	}
	if os.Geteuid() == 0 {
		// Root owns a non-dumpable child's /proc files, and so writes its
		// maps as it is: a root brood, non-dumpable too, is never made
		// dumpable, and its starts do not wait for one another. A
		// confined one still fails at once where it may not write there.
		if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err == nil && v == 0 {
			if err := procWritable(); err != nil {
				return err
			}
		}
		return start()
	}
	dumpableMu.RLock()
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 0 {
		defer dumpableMu.RUnlock()
		return start()
	}
	dumpableMu.RUnlock()
	dumpableMu.Lock()
	defer dumpableMu.Unlock()
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 0 {
		return start() // (made dumpable since: nothing to change)
	}
	if err := procWritable(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: PR_SET_DUMPABLE for a start in a user namespace: %w", err)
	}
	defer unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	return start()
}

// ErrIDMapsRefused is StartMapped's refusal when this process's Landlock
// domain keeps it from writing a child's id maps under /proc: this
// process can start no child in a user namespace, whatever it tries.
var ErrIDMapsRefused = errors.New("sandbox: a start in a user namespace needs its id maps written under /proc, which this process may not write (its Landlock domain): not started")

// procWritable tells whether this process may open a file under /proc
// for writing, as writing a child's id maps needs: it opens its own
// timerslack_ns (mode 0666 whoever owns it, so an answer about Landlock,
// not about the file's owner, which is root while this process is not
// dumpable) and writes nothing. EACCES is the refusal; a kernel without
// the file (before 4.6) tells nothing, and the start then tries.
func procWritable() error {
	fd, err := unix.Open("/proc/self/timerslack_ns", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) {
		return ErrIDMapsRefused
	}
	if err == nil {
		unix.Close(fd)
	}
	return nil
}

// NoPtraceForChild drops CAP_SYS_PTRACE from the calling OS thread's
// bounding set, so that a process started from this thread, and everything
// below it, never holds it. Without it, a root child's sibling passes the
// non-dumpable flag (CAP_SYS_PTRACE overrides it) and reads the child's
// /proc/PID/environ. A non-root process has nothing to drop. As with
// RestrictForChild, the thread must be locked and must die afterwards.
func NoPtraceForChild() error {
	if os.Geteuid() != 0 {
		return nil
	}
	return dropBounding(unix.CAP_SYS_PTRACE, unix.CAP_PERFMON)
}

// NoIntrospectionForCommand drops, from the calling OS thread's bounding
// set, every capability that lets a process of the same uid read another's
// /proc/PID/environ past its non-dumpable flag: CAP_SYS_PTRACE, and the two
// the kernel counts as perfmon_capable for PTRACE_MODE_READ (CAP_PERFMON
// and CAP_SYS_ADMIN). It is for a command a child runs on a model's behalf
// (Bash, hooks): root's exec gives the command its bounding set, so without
// the drop a sibling child's Bash reads a brood child's environment. A
// brood child keeps CAP_SYS_ADMIN itself (its own children's namespaces and
// mounts need it); only what it runs for the model goes without. As with
// RestrictForChild, the thread must be locked and must die afterwards
// (OnThrowawayThread). Under no_new_privs (a confined child) the thread's
// bounding set is also cut to what it is permitted: an exec could give
// the command no more anyway, and the command then sees the bounding set
// it is held to (a confined root child's: keptCaps, capsEveryThread).
func NoIntrospectionForCommand() error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := dropBounding(unix.CAP_SYS_PTRACE, unix.CAP_PERFMON, unix.CAP_SYS_ADMIN); err != nil {
		return err
	}
	return boundingToPermitted()
}

// boundingToPermitted drops from the calling thread's bounding set every
// capability it is not permitted, where it is under no_new_privs and may
// (CAP_SETPCAP effective); elsewhere it changes nothing.
func boundingToPermitted() error {
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: read capabilities: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) == 0 {
		return nil
	}
	permitted := uint64(data[0].Permitted) | uint64(data[1].Permitted)<<32
	for c := uintptr(0); c <= lastCap; c++ {
		if permitted&(1<<c) != 0 {
			continue
		}
		err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break
		}
		if err != nil {
			return fmt.Errorf("sandbox: drop capability %d for a command: %w", c, err)
		}
	}
	return nil
}

// dropBounding drops caps from the calling thread's bounding set; one the
// kernel does not know (EINVAL) or a thread that may not drop (EPERM: it
// holds nothing to drop) is not an error.
func dropBounding(caps ...uintptr) error {
	for _, c := range caps {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("sandbox: drop capability %d for a child: %w", c, err)
		}
	}
	return nil
}
