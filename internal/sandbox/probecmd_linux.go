package sandbox

import (
	"context"
	"os"
	"os/exec"
)

// probeEnv, set to "1" in a process named probeArg0 with no arguments,
// makes a program that links this package exit 0 from its initialiser:
// what a namespace probe starts (ProbeCommand). Both, so that the variable
// alone, in a user's or a child's environment, never silently ends a
// brood that was run to do something.
const (
	probeEnv  = "BROOD_SANDBOX_PROBE"
	probeArg0 = "brood-probe"
)

// probeExe is the program a probe starts: this one, by the kernel's link
// to its own image (the file it was started from, even if that was
// replaced since), never one looked up on PATH.
const probeExe = "/proc/self/exe"

// ProbeCommand is a start of this program that does nothing and exits 0
// (probeEnv, probeArg0; an environment of that alone): what a probe of
// whether a process can be started in some namespaces starts, so that
// neither PATH nor a repository chooses what runs in them. Its
// initialisers up to this package's run first.
func ProbeCommand(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, probeExe)
	cmd.Args = []string{probeArg0}
	cmd.Env = []string{probeEnv + "=1"}
	return cmd
}

// A probe's start (ProbeCommand) ends here, before main.
func init() {
	if isProbe(os.Args, os.Getenv) {
		os.Exit(0)
	}
}

// isProbe says whether a process of these arguments and environment is a
// probe's start (the arguments first: any other start reads no variable
// here, and copies no environment in its initialisers).
func isProbe(args []string, getenv func(string) string) bool {
	return len(args) == 1 && args[0] == probeArg0 && getenv(probeEnv) == "1"
}
