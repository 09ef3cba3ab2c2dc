package child

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/broodhq/brood/internal/isolate"
)

// LeanMain is the main of a lean child binary (cmd/brood-child,
// cmd/brood-child-openai): the child protocol, with what the binary
// links. It returns the exit status.
func LeanMain(name string, links Links) int {
	// As brood's main: an isolated child mounts its copy of the tree first,
	// and a child whose parent died still writes its result.
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return isolate.ExitCode(err) // a failed mount: the parent may retry on a worktree
	}
	opts, ok := Parse(os.Args[1:])
	if !ok {
		fmt.Fprintln(os.Stderr, name+": brood runs this for each subagent (--mode json --task-id ID --envelope PATH); run brood instead")
		return ExitUsage
	}
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Main(ctx, IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}, opts, links)
}
