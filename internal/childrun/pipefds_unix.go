//go:build unix

package childrun

import "syscall"

// protocolFDsCloseOnExec marks the protocol pipe's two ends in this
// process (stdin, stdout) close-on-exec, once the child is in its sandbox
// (whose re-exec of itself keeps them): a program this child starts gets
// its own stdin and stdout (os/exec puts them in place, clearing the flag
// on what it was given), never the parent's pipe by inheritance, so no
// tool can write a protocol line (a forged tool call) on it.
func protocolFDsCloseOnExec() {
	syscall.CloseOnExec(0)
	syscall.CloseOnExec(1)
}
