package sandbox

import (
	"os/exec"
	"syscall"
)

// setCommandAttr puts a tool process in a process group of its own (a
// timeout or a close ends all it started) that gets SIGKILL when the
// thread that started it ends.
func setCommandAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
