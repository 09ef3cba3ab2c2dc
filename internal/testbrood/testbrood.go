// Package testbrood lets a test binary stand in for brood itself, so that
// tests run the real child protocol in real processes without building the
// binary first: the test sets an environment variable, re-executes its own
// binary, and that process runs the CLI instead of the tests. Only tests
// import it.
package testbrood

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/isolate"
)

// Main is a TestMain body. When env is "1" in the environment the process is
// brood (as cmd/brood's main is; a child's command line runs brood-child's
// main, child.Main); otherwise it runs the tests. Either way an
// isolated child first mounts its copy of the tree, as brood's main does.
func Main(m *testing.M, env string) {
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "brood:", err)
		os.Exit(isolate.ExitCode(err)) // a failed mount: the parent may retry on a worktree
	}
	if os.Getenv(env) == "1" {
		signal.Ignore(syscall.SIGPIPE) // as cmd/brood does
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		stdio := cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}
		var code int
		if opts, ok := child.Parse(os.Args[1:]); ok {
			code = child.Main(ctx, stdio, opts) // as brood-child's main
		} else {
			code = cli.Main(ctx, stdio, os.Args[1:])
		}
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
