package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OwnIPC gives cmd an IPC namespace of its own (CLONE_NEWIPC) wherever
// its start can make one with what it already has: a user namespace of
// its own in its flags (a non-root child's PID namespace, a view), or a
// root parent holding CAP_SYS_ADMIN (a cgroup each). In it the child
// neither sees the host's System V shared memory, message queues and
// semaphores (other processes of its uid: PostgreSQL's buffers, X11's
// MIT-SHM) nor leaves any behind: the kernel removes a namespace's
// objects with its last process (red team 21 P1-3). Where it cannot,
// SharedIPCOnThread refuses the child System V IPC instead.
func OwnIPC(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	if a.Cloneflags&syscall.CLONE_NEWUSER != 0 || (os.Geteuid() == 0 && hasSysAdmin()) {
		a.Cloneflags |= syscall.CLONE_NEWIPC
	}
}

// SharedIPCOnThread readies the calling thread to start cmd: where cmd
// starts in this process's IPC namespace (OwnIPC could give it none), it
// puts the thread under no_new_privs and a filter that refuses System V
// IPC but shmdt (EPERM), which the child inherits from its first
// instruction and keeps across every exec. As with RestrictForChild, the
// thread must be locked and must die after the start.
func SharedIPCOnThread(cmd *exec.Cmd) error {
	a := cmd.SysProcAttr
	if a != nil && a.Cloneflags&syscall.CLONE_NEWIPC != 0 {
		return nil
	}
	prog := sharedIPCFilter()
	if len(prog) == 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: set no_new_privs for a child in the host's IPC namespace: %w", err)
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp))); errno != 0 {
		return fmt.Errorf("sandbox: seccomp filter for a child in the host's IPC namespace: %w", errno)
	}
	return nil
}

// sharedIPCFilter is SharedIPCOnThread's program: sysvIPCSyscalls are
// EPERM, anything else is left to the filters beside it (a foreign ABI's
// numbers are the child's own filter's to refuse: filterFor).
func sharedIPCFilter() []unix.SockFilter {
	nrs := sysvIPCSyscalls()
	if len(nrs) == 0 {
		return nil
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		allow = unix.SECCOMP_RET_ALLOW
	)
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // arch
		{Code: jeq, Jt: 1, Jf: 0, K: nativeArch},
		{Code: ret, K: deny},
		{Code: ld, K: 0}, // nr
	}
	for _, nr := range nrs {
		prog = append(prog, unix.SockFilter{Code: jeq, Jt: 0, Jf: 1, K: uint32(nr)}, unix.SockFilter{Code: ret, K: deny})
	}
	return append(prog, unix.SockFilter{Code: ret, K: allow})
}
