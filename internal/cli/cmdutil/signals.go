package cmdutil

import (
	"os"
	"syscall"
)

// StopSignals are the signals that stop a brood process in order — its
// context cancelled, so that what it holds is put back (an in-place
// writer's configuration guard, its children stopped in stages, its
// records written) — instead of Go's default, which ends the process on
// the spot: Ctrl-C, SIGTERM, the SIGHUP of a closed terminal tab or a
// dropped ssh, and SIGQUIT (Ctrl-\).
func StopSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
}
