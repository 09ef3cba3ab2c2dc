// Command brood is a runtime for LLM coding agents built around subagent
// delegation. All of its logic lives in internal/cli and below; main only
// wires the process's streams, environment and signals to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/broodhq/brood/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}
