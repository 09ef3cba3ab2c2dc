// Command cmd runs `brood bench` from the source tree without the root
// command: `go run ./internal/bench/cmd [flags]`. Unless --brood is given it
// builds ./cmd/brood first and measures that build.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	clibench "github.com/broodhq/brood/internal/cli/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--brood" || strings.HasPrefix(a, "--brood=") }) {
		args = append([]string{"--build"}, args...)
	}
	cmd := clibench.NewCmdBench(nil, nil)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}
