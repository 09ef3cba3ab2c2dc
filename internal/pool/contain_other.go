//go:build !linux

package pool

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
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
	pidnsOK          bool
}

func probeContainment(ctx context.Context, want string) containment {
	return containment{mode: ContainNone, note: "no cgroups or PID namespaces off Linux"}
}

// CgroupBase has no answer off Linux.
func CgroupBase() (string, error) { return "", errors.New("cgroups need Linux") }

type hold struct {
	mode string
	fd   int
}

func (c containment) prepare(cmd *exec.Cmd, name string) (*hold, error) {
	return &hold{mode: ContainNone, fd: -1}, nil
}
func (h *hold) started(ok bool)        {}
func (h *hold) killAll(pidfd, pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
func (h *hold) teardown(pid int)       { _ = syscall.Kill(-pid, syscall.SIGKILL) }
