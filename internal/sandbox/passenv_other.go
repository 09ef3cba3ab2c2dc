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

// PassSealed passes nothing off Linux: there is no sealed memory file, and
// the environment, which a process of the same user may read (ps -E on
// macOS), is no place for a secret. The child does without the value
// (docs/secrets.md: its redactor knows only what it reads itself).
func PassSealed(cmd *exec.Cmd, name string, value []byte) error {
	return nil
}

// ClosePassed has nothing to close off Linux.
func ClosePassed(cmd *exec.Cmd) {}

func passedFromCmd(cmd *exec.Cmd, name, v string) (string, bool, error) {
	return "", false, errors.New("sandbox: " + name + " names a memory file, which needs Linux")
}

func takePassed(name, v string) (string, error) {
	return "", errors.New("sandbox: " + name + " names a memory file, which needs Linux")
}
