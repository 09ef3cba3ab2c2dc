// Command brood-child is the lean build of brood's child protocol: the
// binary a brood parent runs for each subagent when it is installed beside
// brood (`go install github.com/broodhq/brood/cmd/...@latest` installs both).
// It links the agent loop, the tools, the provider SDKs and the sandbox —
// everything a child does — and none of the command tree, the terminal UI
// or the Temporal worker, so a subagent does not pay for their package
// initialisers. It is not for direct use: run brood.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/isolate"
)

func main() {
	// The parent asks, once, which source this binary was built from
	// (package childexe: the proof of one build when nothing else names it).
	if len(os.Args) == 2 && os.Args[1] == childexe.DigestFlag {
		d, err := childexe.SourceDigest()
		if err != nil {
			fmt.Fprintln(os.Stderr, "brood-child:", err)
			os.Exit(1)
		}
		fmt.Println(d)
		return
	}
	// As brood's main: an isolated child mounts its copy of the tree first,
	// and a child whose parent died still writes its result.
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "brood:", err)
		os.Exit(isolate.ExitCode(err)) // a failed mount: the parent may retry on a worktree
	}
	opts, ok := child.Parse(os.Args[1:])
	if !ok {
		fmt.Fprintln(os.Stderr, "brood-child: brood runs this for each subagent (--mode json --task-id ID --envelope PATH); run brood instead")
		os.Exit(cmdutil.ExitUsage)
	}
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := child.Main(ctx, cmdutil.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}, opts, delegate.Extras{})
	stop()
	os.Exit(code)
}
