package sandbox

import (
	"os"
	"os/exec"
	"strings"
)

// passInEnvMax is the longest value PassEnv puts in the child's
// environment itself. Linux refuses an exec whose one environment string
// is longer than 128 KiB (MAX_ARG_STRLEN: E2BIG, "argument list too
// long"), and all of them together past a quarter of the stack limit; a
// longer value (a policy hiding thousands of files a Read deny matches)
// goes in a sealed memory file instead.
const passInEnvMax = 32 << 10

// passedPrefix starts the environment value that names the descriptor a
// longer value was passed on ("memfd:N"): a value PassEnv puts in the
// environment itself never starts so (its callers pass JSON objects).
const passedPrefix = "memfd:"

// passedName names the memory files PassEnv makes, as the parent holds
// them (ClosePassed) and as the child finds them (/proc/self/fd: the
// kernel shows "/memfd:NAME (deleted)").
const passedName = "brood-passed-env"

// PassedEnv is the value PassEnv gave cmd for name (the last, as for
// exec), read back on the parent's side: from the environment or from the
// memory file it names. ok is false where cmd has none.
func PassedEnv(cmd *exec.Cmd, name string) (value string, ok bool, err error) {
	for i := len(cmd.Env) - 1; i >= 0; i-- {
		v, found := strings.CutPrefix(cmd.Env[i], name+"=")
		if !found {
			continue
		}
		if !strings.HasPrefix(v, passedPrefix) {
			return v, true, nil
		}
		return passedFromCmd(cmd, name, v)
	}
	return "", false, nil
}

// TakeEnv is the child's side of PassEnv: the value its parent passed for
// name, removed from the environment (and its memory file closed), so
// that nothing the child starts inherits either. ok is false when none
// was passed. A value that names a descriptor which is not a sealed
// memory file of brood's is an error: the child must not guess at what
// its parent meant.
func TakeEnv(name string) (value string, ok bool, err error) {
	v, found := os.LookupEnv(name)
	if !found {
		return "", false, nil
	}
	os.Unsetenv(name)
	if !strings.HasPrefix(v, passedPrefix) {
		return v, true, nil
	}
	value, err = takePassed(name, strings.TrimPrefix(v, passedPrefix))
	return value, err == nil, err
}
