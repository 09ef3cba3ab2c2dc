package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ScopeForChild puts the calling OS thread in a Landlock domain that
// restricts nothing on the file system but scopes signals and abstract unix
// sockets (ABI 6), for a child whose policy asks for no other restriction:
// a process started from this thread cannot signal (or, being in a domain,
// ptrace) its parent, its siblings or anything else outside its own tree.
// As with RestrictForChild, the caller must have locked the thread and must
// let it die. It returns false where the kernel has no scoping.
func ScopeForChild() (bool, error) {
	if landlockABI() < 6 {
		return false, nil
	}
	attr := rulesetAttr{scoped: unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return false, fmt.Errorf("sandbox: landlock_create_ruleset (scope): %w", errno)
	}
	defer unix.Close(int(fd))
	runtime.LockOSThread()
	if os.Getuid() != 0 {
		// Without CAP_SYS_ADMIN Landlock needs no_new_privs.
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return false, fmt.Errorf("sandbox: set no_new_privs: %w", err)
		}
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return false, fmt.Errorf("sandbox: landlock_restrict_self (scope): %w", errno)
	}
	return true, nil
}

// OnThrowawayThread runs f on a locked OS thread that is not the process's
// main thread and that dies when f returns, for restrictions that must reach
// a child and nothing else. The main thread is never used: its credentials
// are what the kernel checks when something signals the process, and a
// goroutine that exits locked to it would wedge it.
func OnThrowawayThread(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			f() // never unlocked: the thread exits with the goroutine
			return
		}
		// Holding the main thread here, the inner goroutine cannot get it.
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer close(done)
			f()
		}()
		<-done
		runtime.UnlockOSThread()
	}()
}
