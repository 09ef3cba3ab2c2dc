package pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/sandbox"
)

// Containment modes: how the pool keeps everything a child starts within
// the child's reach, so that nothing it starts outlives it.
const (
	// ContainCgroup: each child is born (clone3 CLONE_INTO_CGROUP) in a
	// cgroup v2 of its own, named by its depth.Marker; once it exits,
	// cgroup.kill takes down whatever is left, sessions and re-parented
	// orphans included.
	ContainCgroup = "cgroup"
	// ContainPIDNS: each child is the init of a PID namespace of its own (in
	// a user namespace when brood is not root); when it exits the kernel
	// kills the namespace, and until then every orphan below it is
	// re-parented to it.
	ContainPIDNS = "pidns"
	// ContainNone: only the child's session is known; a process that left
	// it may survive. brood doctor says so.
	ContainNone = "none"
)

// cgroupBaseName is the sub-hierarchy a root brood makes under the cgroup v2
// mount for its children; a child's children nest under the child's own
// cgroup.
const cgroupBaseName = "brood"

// containment is what the pool found it can use, decided once per pool.
type containment struct {
	mode  string
	base  string // cgroup mode: the directory children's cgroups are made in
	note  string // why the mode is not cgroup
	pidns *pidnsProbe
	lim   limiter
}

// pidnsProbe tells whether a child can be started in a PID namespace of
// its own. In cgroup mode only a child whose cgroup cannot be made needs
// the answer, so it is asked then: the probe is a fork and exec (1.4-2
// ms) that a run whose cgroups hold never pays. Only the kernel's answer
// is kept for the pool's life: the probe's clean exit (yes), or its start
// refused (no: EPERM, EACCES or EINVAL from the clone or the id maps, a
// confined process that may not write them, ...). What says nothing of
// the machine (noAnswerYet: a namespace limit reached, ENOSPC or EUSERS,
// which any process of the user can use up; a fork that found no memory
// or process left, EAGAIN or ENOMEM; the probe started and then failing
// or dying) is no answer: the child that asked fails, and the next one
// asks again.
type pidnsProbe struct {
	mu      sync.Mutex
	settled bool
	err     error // the settled answer: nil, or why not
	probes  int   // how many times it probed (tests)
	// try is the probe (tryPIDNS; tests put another).
	try func(ctx context.Context) error
}

// check probes (until it has the kernel's answer) and says why not, or
// nil. final says the answer is the kernel's (kept); an error that is not
// is no answer (unsettled).
func (p *pidnsProbe) check(ctx context.Context) (final bool, err error) {
	if p == nil {
		return true, errors.New("no PID-namespace probe")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.settled {
		return true, p.err
	}
	p.probes++
	try := p.try
	if try == nil {
		try = tryPIDNS
	}
	err = try(context.WithoutCancel(ctx))
	if noAnswerYet(err) {
		return false, err
	}
	p.settled, p.err = true, err
	return true, err
}

// noAnswerYet reports whether err, a PID-namespace probe's, says nothing
// of whether this machine (or this confined process) gives PID
// namespaces: a namespace limit reached (ENOSPC, EUSERS), a fork that
// found no process or memory left (EAGAIN, ENOMEM), or the probe started
// and then failing or dying. Any other failure to start it is the
// kernel's (or the process's own sandbox's) no: EPERM, EACCES or EINVAL
// from the clone or the id maps, a read-only /proc, a Landlock domain
// that may not write them (sandbox.ErrIDMapsRefused).
func noAnswerYet(err error) bool {
	if err == nil {
		return false
	}
	var exit *exec.ExitError
	return sandbox.UserNSLimited(err) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) || errors.As(err, &exit)
}

// noAnswer is err, a PID-namespace probe's that is not the kernel's
// answer, as the error a child's start fails with.
func noAnswer(err error) error {
	err = fmt.Errorf("contain the child in a PID namespace: %w", err)
	if sandbox.UserNSLimited(err) {
		return sandbox.NSLimitError(err)
	}
	return fmt.Errorf("%w (the probe of whether PID namespaces work here did not get the kernel's answer; the child is not started with less: the next one asks again)", err)
}

// probeContainment decides the mode. want is "" or "auto" (the best the
// machine allows), "cgroup", or "pidns" (forced: the fallback is tested this
// way). A forced mode the machine lacks falls back with a note. A PID
// namespace probe that got no answer (a limit) leaves the mode at pidns:
// each child asks again until the kernel answers (contain).
func probeContainment(ctx context.Context, want string) containment {
	var notes []string
	pidns := &pidnsProbe{}
	if want == "" || want == "auto" || want == ContainCgroup {
		base, err := CgroupBase()
		if err == nil {
			sweepStale(base)
			return containment{mode: ContainCgroup, base: base, pidns: pidns, lim: probeLimiter(base)}
		}
		notes = append(notes, "no cgroup: "+err.Error())
	} else if want != ContainPIDNS {
		notes = append(notes, fmt.Sprintf("unknown containment %q", want))
	} else {
		notes = append(notes, "PID namespace asked for")
	}
	switch final, err := pidns.check(ctx); {
	case err != nil && !final:
		notes = append(notes, "the PID namespace probe got no answer ("+err.Error()+"): each child asks again")
	case err != nil:
		notes = append(notes, "no PID namespace: "+err.Error())
		return containment{mode: ContainNone, note: strings.Join(notes, "; "), pidns: pidns, lim: probeLimiter("")}
	}
	return containment{mode: ContainPIDNS, note: strings.Join(notes, "; "), pidns: pidns, lim: probeLimiter("")}
}

// CgroupMount finds the cgroup v2 mount (/sys/fs/cgroup on a unified
// machine, /sys/fs/cgroup/unified on a hybrid one).
func CgroupMount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint options... - fstype source opts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 && f[3] == "/" {
			return f[4], nil
		}
	}
	return "", errors.New("cgroup v2 is not mounted")
}

// CgroupBase is where this process makes its children's cgroups: its own
// cgroup when it is itself a brood child (so a task's subtree nests under
// it and one cgroup.kill takes the whole subtree), else the brood
// sub-hierarchy under the cgroup v2 mount, created if missing.
func CgroupBase() (string, error) {
	mnt, err := CgroupMount()
	if err != nil {
		return "", err
	}
	own, err := ownCgroup()
	if err != nil {
		return "", err
	}
	base := filepath.Join(mnt, cgroupBaseName)
	if _, ok := depth.Parse(own); ok {
		base = filepath.Join(mnt, own)
	} else if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("create %s: %w", base, err)
	}
	if err := unix.Access(filepath.Join(base, "cgroup.procs"), unix.W_OK); err != nil {
		return "", fmt.Errorf("%s is not writable by this user: %w", base, err)
	}
	if err := unix.Access(base, unix.W_OK); err != nil {
		return "", fmt.Errorf("%s is not writable by this user: %w", base, err)
	}
	return base, nil
}

// ownCgroup is this process's cgroup v2 path ("/a/b").
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("this process has no cgroup v2 membership")
}

// tryPIDNS starts this program's no-op start (sandbox.ProbeCommand, never
// a `true` found on PATH) as the init of a new PID namespace, the way a
// child would be started: only trying tells whether the kernel, a seccomp
// profile or a sandbox (Landlock forbids writing a child's uid_map) allow it.
func tryPIDNS(ctx context.Context) error {
	cmd := sandbox.ProbeCommand(ctx)
	sandbox.AddNamespaces(cmd, syscall.CLONE_NEWPID, nil)
	started := make(chan error, 1)
	// From a throw-away thread, as a child is (sandbox.NamespacesOnThread).
	sandbox.OnThrowawayThread(func() {
		started <- sandbox.StartMapped(cmd, func() error {
			if err := sandbox.NamespacesOnThread(cmd); err != nil {
				return err
			}
			return cmd.Start()
		})
	})
	if err := <-started; err != nil {
		return err
	}
	return cmd.Wait()
}

// hold is one child's containment: made before it starts, torn down after
// its leader exits.
type hold struct {
	mode string
	dir  string // cgroup mode: the child's cgroup
	fd   int    // cgroup mode: open until the child started
	cmd  *exec.Cmd
	lim  limiter
	lf   limitFiles
}

// prepare sets cmd up to start inside a containment of c's mode, held to
// lim. A cgroup that cannot be made (say a sandboxed parent may not write
// its cgroup) falls back to a PID namespace for this child.
func (c containment) prepare(ctx context.Context, cmd *exec.Cmd, name string, lim limits.Set) (*hold, error) {
	h, err := c.contain(ctx, cmd, name)
	if err != nil {
		return nil, err
	}
	h.cmd, h.lim, h.lf.lim = cmd, c.lim, lim
	if h.mode == ContainCgroup {
		err = c.lim.setV2(&h.lf, h.dir)
	}
	if err == nil {
		c.lim.makeV1(&h.lf, name)
	}
	if err != nil {
		h.started(false)
		return nil, fmt.Errorf("limit the child: %w", err)
	}
	// The counters a breach is measured from, before the child can move
	// them (its cgroups are new: this is all but always zero).
	h.lf.oomBase, h.lf.pBase = h.lf.counters()
	return h, nil
}

func (c containment) contain(ctx context.Context, cmd *exec.Cmd, name string) (*hold, error) {
	if c.mode == ContainCgroup {
		dir := filepath.Join(c.base, name)
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			// A leftover of an earlier run of the same task.
			killCgroup(dir)
			err = os.Mkdir(dir, 0o755)
		}
		if err == nil {
			fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				_ = os.Remove(dir)
				return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
			}
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
			ownPIDNS(cmd)
			return &hold{mode: ContainCgroup, dir: dir, fd: fd}, nil
		}
	}
	if c.mode == ContainCgroup || c.mode == ContainPIDNS {
		switch final, err := c.pidns.check(ctx); {
		case err != nil && !final:
			// Not started with less than the kernel gives (a limit
			// frees when what holds it ends).
			return nil, noAnswer(err)
		case err != nil:
			return &hold{mode: ContainNone, fd: -1}, nil
		}
		sandbox.AddNamespaces(cmd, syscall.CLONE_NEWPID, nil)
		sandbox.AskOwnProc(cmd)
		return &hold{mode: ContainPIDNS, fd: -1}, nil
	}
	return &hold{mode: ContainNone, fd: -1}, nil
}

// ownPIDNS gives a child held by its cgroup a PID namespace of its own
// too, with a /proc of it (sandbox.AskOwnProc), so that it lists and reads
// only its own processes: without it every host process's command line
// (another user's daemon's password, another run's prompt) is readable to
// it. Only a child started in a new user namespace of its own can mount
// that /proc (every child of the root that builds its view: isolate); any
// other keeps the host's PID namespace, whose /proc would not match its
// own pids. The cgroup still holds and kills its processes.
func ownPIDNS(cmd *exec.Cmd) {
	a := cmd.SysProcAttr
	if a.Cloneflags&syscall.CLONE_NEWUSER == 0 || len(a.UidMappings) == 0 {
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWPID
	if !sandbox.AskOwnProc(cmd) {
		a.Cloneflags &^= syscall.CLONE_NEWPID
	}
}

// started is called once the process runs (or failed to start). A child
// that runs is moved into its v1 cgroups and given its rlimits; if that
// fails it is killed (it must never run beyond its limits) and the error
// says why.
func (h *hold) started(ok bool) error {
	if h.fd >= 0 {
		_ = unix.Close(h.fd)
		h.fd = -1
	}
	var err error
	if ok && h.cmd != nil && h.cmd.Process != nil {
		a := h.cmd.SysProcAttr
		ownNS := a != nil && a.Cloneflags&syscall.CLONE_NEWUSER != 0
		if err = h.lim.join(&h.lf, h.cmd.Process.Pid, ownNS); err != nil {
			_ = h.cmd.Process.Kill()
		}
	}
	if !ok {
		h.lf.closeCounters()
		if h.dir != "" {
			_ = os.Remove(h.dir)
		}
		h.lf.removeV1()
	}
	return err
}

// breach names the limit the child hit since it started, "" for none.
func (h *hold) breach() string { return h.lf.breach() }

// killAll kills everything the child started, wherever it went.
func (h *hold) killAll(pidfd, pid int) {
	switch h.mode {
	case ContainCgroup:
		_ = os.WriteFile(filepath.Join(h.dir, "cgroup.kill"), []byte("1"), 0)
	case ContainPIDNS:
		// The init of the namespace: the kernel kills the rest with it.
		_ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
	default:
		_ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// teardown runs after the child's leader exited: nothing it started
// survives it.
func (h *hold) teardown(pid int) {
	h.lf.closeCounters() // the watch reads none of its counters from now on
	switch h.mode {
	case ContainCgroup:
		killCgroup(h.dir)
	case ContainNone:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	h.lf.removeV1()
}

// killCgroup kills every process in dir and below, waits for them to be
// gone and removes dir and its sub-cgroups (a child's own children's).
// The kernel removes a cgroup only when no process is in it and it has no
// sub-cgroup, so a removal that succeeds (the usual end: the child's
// leader was its only process, and has exited) leaves nothing to kill.
func killCgroup(dir string) {
	if err := unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	waitEmpty(dir, 10*time.Second)
	removeCgroupTree(dir)
}

// waitEmpty polls cgroup.events until the cgroup has no process left. The
// processes were sent SIGKILL, so this is a matter of the kernel reaping
// them; the bound only keeps a stuck (D-state) process from hanging us.
func waitEmpty(dir string, bound time.Duration) {
	deadline := time.Now().Add(bound)
	wait := 100 * time.Microsecond
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if err != nil || strings.Contains(string(b), "populated 0") {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// removeCgroupTree removes dir's sub-cgroups bottom-up, then dir.
func removeCgroupTree(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroupTree(filepath.Join(dir, e.Name()))
		}
	}
	_ = unix.Rmdir(dir)
}

// sweepStale removes cgroups under base that a parent killed with SIGKILL
// left behind. A cgroup with processes or sub-cgroups is never removed (the
// kernel refuses), and one younger than a minute may be a live parent's
// that its child has not been cloned into yet.
func sweepStale(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Minute {
			_ = unix.Rmdir(filepath.Join(base, e.Name()))
		}
	}
}

// askPidfd has clone return the child's pidfd into *fd.
func askPidfd(cmd *exec.Cmd, fd *int) { cmd.SysProcAttr.PidFD = fd }

// signalPidfd signals the process a pidfd refers to (never a reused pid).
func signalPidfd(fd int, sig syscall.Signal) { _ = unix.PidfdSendSignal(fd, sig, nil, 0) }

func closeFD(fd int) { _ = unix.Close(fd) }

// ProbeContainment says how a pool of this process would hold its children
// (want as in Config.Containment): the mode, the cgroup directory children
// would be made in (cgroup mode), and why a better mode is not used. brood
// doctor prints it.
func ProbeContainment(ctx context.Context, want string) (mode, base, note string) {
	c := probeContainment(ctx, want)
	return c.mode, c.base, c.note
}

// pidfdExited reports whether the process a pidfd refers to has exited
// (the pidfd polls readable then), without waiting.
func pidfdExited(fd int) bool {
	if fd < 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}
