//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

// PassEnv puts value in cmd's environment off Linux (no sealed memory
// files; no child confinement reads a long list there).
func PassEnv(cmd *exec.Cmd, name string, value []byte) error {
	cmd.Env = append(cmd.Env, name+"="+string(value))
	return nil
}

// PassSealed is PassEnv off Linux (no sealed memory files).
func PassSealed(cmd *exec.Cmd, name string, value []byte) error {
	return PassEnv(cmd, name, value)
}

// ClosePassed has nothing to close off Linux.
func ClosePassed(cmd *exec.Cmd) {}

func passedFromCmd(cmd *exec.Cmd, name, v string) (string, bool, error) {
	return "", false, errors.New("sandbox: " + name + " names a memory file, which needs Linux")
}

func takePassed(name, v string) (string, error) {
	return "", errors.New("sandbox: " + name + " names a memory file, which needs Linux")
}
