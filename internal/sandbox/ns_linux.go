package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Probe inspects the running kernel. It starts short-lived processes (the
// `true` program) in new namespaces, because only trying tells whether
// seccomp, sysctls or a container runtime forbid them; it costs a few
// milliseconds, so call it once per process.
func Probe(ctx context.Context) Report {
	r := Report{LandlockABI: landlockABI(), Errors: map[string]string{}}
	if r.LandlockABI == 0 {
		r.Errors["landlock"] = "landlock_create_ruleset: not supported by this kernel or disabled"
	}
	// The two tries at once: a spawn may wait for this (a root's first
	// child), and each is a fork and an exec.
	netErr := make(chan error, 1)
	go func() { netErr <- tryNamespaces(ctx, syscall.CLONE_NEWNET) }()
	if err := tryNamespaces(ctx, syscall.CLONE_NEWUSER); err != nil {
		r.Errors["user_namespaces"] = err.Error()
	} else {
		r.UserNS = true
	}
	if err := <-netErr; err != nil {
		r.Errors["network_namespace"] = err.Error()
	} else {
		r.NetNS = true
	}
	return r
}

// ProbeUserNS is Probe's user-namespace try alone, for a caller that needs
// to know nothing else (a dispatcher: a child's read-only view and an
// in-place writer's view are user namespaces): it does not make a network
// namespace, whose set-up and teardown are the costliest part of Probe.
func ProbeUserNS(ctx context.Context) Report {
	r := Report{LandlockABI: landlockABI(), Errors: map[string]string{}}
	if err := TryUserNS(ctx); err != nil {
		r.Errors["user_namespaces"] = err.Error()
	} else {
		r.UserNS = true
	}
	return r
}

// TryUserNS starts `true` in a new user namespace: nil when it ran, else
// why not, which UserNSLimited and UserNSRefused tell apart (a limit
// reached is no answer about this machine).
func TryUserNS(ctx context.Context) error {
	return tryNamespaces(ctx, syscall.CLONE_NEWUSER)
}

// StartsUserNS reports whether cmd is to be started in a new user
// namespace (AddNamespaces).
func StartsUserNS(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWUSER != 0
}

// UserNSRefused reports whether err, the failed start of a command in a
// new user namespace, may be the kernel having none for this process: the
// clone's EPERM (a sysctl, a seccomp profile, an LSM), EINVAL, or the id
// maps' EPERM or EACCES. An exec's own EACCES or EPERM reads the same:
// only a probe (TryUserNS) tells them apart. A limit reached is not this
// (UserNSLimited).
func UserNSRefused(err error) bool {
	switch startErrno(err) {
	case syscall.EPERM, syscall.EACCES, syscall.EINVAL:
		return true
	}
	return false
}

// UserNSLimited reports whether err, the failed start of a command in a
// new user namespace, is a limit reached: ENOSPC
// (/proc/sys/user/max_user_namespaces, counted for the user in every
// ancestor namespace, which any process of the user can use up, a
// confined child too) or EUSERS (namespaces nested too deep). It says
// nothing of whether this machine has user namespaces: the limit frees
// when what holds them ends.
func UserNSLimited(err error) bool {
	switch startErrno(err) {
	case syscall.ENOSPC, syscall.EUSERS:
		return true
	}
	return false
}

// startErrno is the errno of a failed fork/exec, or 0.
func startErrno(err error) syscall.Errno {
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Op != "fork/exec" {
		return 0
	}
	var errno syscall.Errno
	if !errors.As(pe.Err, &errno) {
		return 0
	}
	return errno
}

// tryNamespaces starts this program itself (ProbeCommand: a no-op start,
// never a `true` that a PATH or a repository could choose) with the given
// clone flags (plus a user namespace when this process is not root) and
// reports whether it ran. It is started from a throw-away thread, as a
// child is (NamespacesOnThread).
func tryNamespaces(ctx context.Context, flags uintptr) error {
	cmd := ProbeCommand(ctx)
	AddNamespaces(cmd, flags, nil)
	err := startInNamespaces(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return fmt.Errorf("start in new namespace: %w", err)
	}
	return nil
}

// startInNamespaces starts cmd from a throw-away thread that holds what
// its namespaces need for the clone (NamespacesOnThread), as the pool
// starts a child.
func startInNamespaces(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	OnThrowawayThread(func() {
		err := NamespacesOnThread(cmd)
		if err == nil {
			err = cmd.Start()
		}
		started <- err
	})
	return <-started
}

// ConfigureNetwork is called by the parent before it starts a child whose
// policy forbids the network: the child is created in its own, empty
// network namespace (loopback only, and down). It returns an error when the
// machine has no network namespaces; the caller then records that only the
// Landlock TCP ban (if any) holds.
func ConfigureNetwork(cmd *exec.Cmd, rep Report) error {
	if !rep.NetNS {
		return fmt.Errorf("sandbox: network namespaces unavailable on this machine: %s", rep.Errors["network_namespace"])
	}
	AddNamespaces(cmd, syscall.CLONE_NEWNET, nil)
	return nil
}

// AddNamespaces merges clone flags into cmd.SysProcAttr. Creating most
// namespaces needs CAP_SYS_ADMIN, which an unprivileged user only has inside
// a new user namespace, so for a non-root caller (or when the flags already
// include CLONE_NEWUSER) a user namespace is added that maps the caller's
// own uid and gid to themselves: files keep their owner and git's ownership
// checks keep passing. ambient lists capabilities a non-root child must keep
// across exec inside that namespace (isolate needs CAP_SYS_ADMIN to mount).
// It is safe to call more than once on the same command.
func AddNamespaces(cmd *exec.Cmd, flags uintptr, ambient []uintptr) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	uid, gid := os.Getuid(), os.Getgid()
	if uid != 0 || flags&syscall.CLONE_NEWUSER != 0 || !hasSysAdmin() {
		// (A root process without CAP_SYS_ADMIN is a confined child: its
		// own children's namespaces need a user namespace, as a user's.)
		flags |= syscall.CLONE_NEWUSER
	}
	a.Cloneflags |= flags
	if a.Cloneflags&syscall.CLONE_NEWUSER != 0 && len(a.UidMappings) == 0 {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	if uid != 0 {
		for _, c := range ambient {
			if !containsCap(a.AmbientCaps, c) {
				a.AmbientCaps = append(a.AmbientCaps, c)
			}
		}
	}
}

func containsCap(caps []uintptr, c uintptr) bool {
	for _, x := range caps {
		if x == c {
			return true
		}
	}
	return false
}
