package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/spawntrace"
)

// Process is a brood binary's main on what it links (brood's Links, or
// brood-fleet's: those and the fleet): the process's streams, environment
// and signals wired to the child protocol or the command line. It returns
// the exit status.
func Process(links cmdutil.Links) int {
	// An isolated child mounts its copy of the tree before anything else
	// looks at the file system (and the isolation probe ends here).
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "brood:", err)
		return isolate.ExitCode(err) // a failed mount: the parent may retry on a worktree
	}
	// A child whose parent died must still write its result: a write to
	// the gone parent's pipe fails instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	// brood bench traces a root's own start (spawntrace.RootEnvVar): its
	// first mark is here, the runtime and the initialisers done.
	traced := spawntrace.Root(context.Background(), os.Getenv)
	// SIGHUP (a closed terminal, a dropped ssh) and SIGQUIT stop it as
	// SIGTERM does, in every mode: an in-place writer's guard puts back
	// what the kernel cannot hold (P1-4), where Go's default would end the
	// process before it ran.
	// Never stopped: the process exits as soon as its command returns, and
	// signal.Stop would first hand each signal's mask to the runtime's
	// signal thread and wait for it (milliseconds on a loaded machine,
	// between a run's answer and its exit).
	ctx, _ := signal.NotifyContext(traced, cmdutil.StopSignals()...)
	stdio := IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}
	if opts, ok := child.Parse(os.Args[1:]); ok {
		// A subagent (when brood-child is not installed beside brood): no
		// command tree, no settings unless it delegates.
		return child.Main(ctx, child.IO(stdio), opts, ChildLinks(links))
	}
	HoldInheritedFDs() // nothing this root starts inherits what it did
	return Run(ctx, stdio, os.Args[1:], links)
}
