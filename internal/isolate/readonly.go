package isolate

import (
	"os"
	"os/exec"
	"strconv"
)

// modeReadOnly asks a read-only child to hold every mount read-only in its
// own mount namespace, but for its own directories (its task directory,
// TMPDIR included), before it runs anything.
const modeReadOnly Mode = "readonly"

// roViewVar is set by EnterFromEnv to this process's id once a read-only
// view holds (the id, so that a descendant which inherits the environment
// but not the view is not fooled).
const roViewVar = "BROOD_RO_VIEW"

// ConfigureReadOnly asks for a read-only child's user and mount namespaces
// and passes its writable directories in its environment; the child's
// EnterFromEnv binds each over itself read-write and makes every other
// mount read-only. A file's times, mode, owner and extended attributes then
// change only beneath writable (EROFS elsewhere), which is what lets the
// child's syscall filter allow chmod, chown, utimes and xattrs: Landlock
// does not cover them, and the filter cannot see paths. Call it after
// anything that replaces cmd.Env or cmd.SysProcAttr wholesale.
func ConfigureReadOnly(cmd *exec.Cmd, writable []string) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if err := addMountNamespace(cmd); err != nil {
		return err
	}
	spec := mountSpec{Mode: modeReadOnly, RW: writable}
	return spec.pass(cmd)
}

// ReadOnlyView reports whether this process entered a read-only view
// (ConfigureReadOnly) before it ran anything: every mount but its writable
// directories is read-only in its mount namespace.
func ReadOnlyView() bool { return os.Getenv(roViewVar) == strconv.Itoa(os.Getpid()) }
