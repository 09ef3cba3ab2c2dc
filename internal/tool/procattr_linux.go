package tool

import "syscall"

// shellProcAttr puts a Bash command in its own process group and has the
// kernel kill the shell if brood dies first.
func shellProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
