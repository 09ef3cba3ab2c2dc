//go:build !linux

package sandbox

import "os/exec"

// setCommandAttr has nothing to add off Linux.
func setCommandAttr(*exec.Cmd) {}
