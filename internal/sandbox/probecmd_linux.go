package sandbox

import (
	"context"
	"os"
	"os/exec"
)

// probeEnv, set to "1", makes a program that links this package exit 0
// from its initialiser (exitIfProbe): what a namespace probe starts.
const probeEnv = "BROOD_SANDBOX_PROBE"

// probeExe is the program a probe starts: this one, by the kernel's link
// to its own image (the file it was started from, even if that was
// replaced since), never one looked up on PATH.
const probeExe = "/proc/self/exe"

// ProbeCommand is a start of this program that does nothing and exits 0
// (probeEnv): what a probe of whether a process can be started in some
// namespaces starts, so that neither PATH nor a repository chooses what
// runs in them. Its initialisers up to this package's run first.
func ProbeCommand(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, probeExe)
	cmd.Args = []string{"brood-probe"}
	cmd.Env = append(os.Environ(), probeEnv+"=1")
	return cmd
}

// A probe's start (ProbeCommand) ends here, before main.
func init() {
	if os.Getenv(probeEnv) == "1" {
		os.Exit(0)
	}
}
