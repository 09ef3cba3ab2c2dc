//go:build !linux

package tool

import "syscall"

// shellProcAttr puts a Bash command in its own process group.
func shellProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
