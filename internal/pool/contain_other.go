//go:build !linux

package pool

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/limits"
)

// Containment modes (see contain_linux.go); off Linux only the session is
// known.
const (
	ContainCgroup = "cgroup"
	ContainPIDNS  = "pidns"
	ContainNone   = "none"
)

type containment struct {
	mode, base, note string
}

func probeContainment(ctx context.Context, want string) containment {
	return containment{mode: ContainNone, note: "no cgroups or PID namespaces off Linux"}
}

// CgroupBase has no answer off Linux.
func CgroupBase() (string, error) { return "", errors.New("cgroups need Linux") }

type hold struct {
	mode string
	fd   int
	pid  int
}

func (c containment) prepare(ctx context.Context, cmd *exec.Cmd, name string, lim limits.Set) (*hold, error) {
	return &hold{mode: ContainNone, fd: -1}, nil
}
func (h *hold) started(ok bool) error                   { return nil }
func (h *hold) breach() string                          { return "" }
func (h *hold) rlimitBreach(string) string              { return "" }
func (h *hold) limited() bool                           { return false }
func (h *hold) onThread(next func() error) func() error { return next }
func (h *hold) killAll(pidfd, pid int)                  { _ = syscall.Kill(-pid, syscall.SIGKILL) }
func (h *hold) teardown(pid int)                        { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// Off Linux there are no pidfds: the pool signals the pid, which is safe
// until it reaps the child.
func askPidfd(cmd *exec.Cmd, fd *int)        { *fd = -1 }
func signalPidfd(fd int, sig syscall.Signal) {}
func closeFD(fd int)                         {}

// Killed is what KillTask did.
type Killed struct {
	Owner, PIDs []int
	Cgroup, How string
}

// ErrNoOwner means no process owns the task.
var ErrNoOwner = errors.New("no process owns the task (its parent is gone)")

// ErrQueued means the task waits for a pool slot: nothing runs yet.
var ErrQueued = errors.New("the task is queued (waiting for a pool slot in its parent): no process of it runs yet")

// KillTask needs the kernel's tables of Linux to prove which process is a
// task's child; elsewhere it refuses.
func KillTask(ctx context.Context, id, lockPath string, grace time.Duration, queued func() bool, found func() error) (Killed, error) {
	return Killed{}, errors.New("brood tasks kill needs Linux (pidfds and /proc); stop the task from its parent (Ctrl-C)")
}

// ProbeContainment reports that only the session is known off Linux.
func ProbeContainment(ctx context.Context, want string) (mode, base, note string) {
	c := probeContainment(ctx, want)
	return c.mode, c.base, c.note
}

func pidfdExited(fd int) bool { return false }

// ProbeLimits: off Linux only the open-file limit would hold, and brood
// sets none there.
func ProbeLimits(ctx context.Context, want string) map[string]string {
	return map[string]string{"memory": "nothing (no cgroups off Linux)", "processes": "nothing (no cgroups off Linux)",
		"files": "nothing (off Linux)", "file_size": "nothing (off Linux)", "output": "the Bash tool: each spill keeps a head and a tail, all spills of a child within the limit"}
}
