// Package testbrood lets a test binary stand in for brood itself, so that
// tests run the real child protocol in real processes without building the
// binary first: the test sets an environment variable, re-executes its own
// binary, and that process runs the CLI instead of the tests. Only tests
// import it.
package testbrood

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/openai"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/root/fleetlink"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/telemetry/otlp"
)

// Main is a TestMain body. When env is "1" in the environment the process is
// brood (as cmd/brood's main is: a child's command line runs child.Main,
// and as brood-child's main does when the binary was run by that name);
// otherwise it runs the tests. Either way an
// isolated child first mounts its copy of the tree, as brood's main does.
func Main(m *testing.M, env string) {
	if os.Getenv(env) == "1" {
		Brood()
	}
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "brood:", err)
		os.Exit(isolate.ExitCode(err)) // a failed mount: the parent may retry on a worktree
	}
	os.Exit(m.Run())
}

// Brood is brood-fleet's main in this process, as cmd/brood-fleet's is (a child's
// command line runs child.Main; run as a file named brood-child, as
// brood-child's main, with one SDK: LinkLean), and exits with its status.
func Brood() {
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "brood:", err)
		os.Exit(isolate.ExitCode(err)) // a failed mount: the parent may retry on a worktree
	}
	signal.Ignore(syscall.SIGPIPE) // as cmd/brood does
	// As cmd/brood: brood bench's trace of a root's own run, and a signal
	// context never stopped (the process exits right after).
	traced := spawntrace.Root(context.Background(), os.Getenv)
	ctx, _ := signal.NotifyContext(traced, cmdutil.StopSignals()...)
	stdio := cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}
	var code int
	if opts, ok := child.Parse(os.Args[1:]); ok {
		links := cli.ChildLinks(Links())
		if exe, err := os.Executable(); err == nil {
			// A lean binary's links, and the scripted model (which the
			// real ones do not link): the tests' children run it.
			switch filepath.Base(exe) {
			case childexe.Name:
				links = child.Links{Models: provider.Adapters{Anthropic: anthropic.Adapter}, Script: links.Script}
			case childexe.NameOpenAI:
				links = child.Links{Models: provider.Adapters{OpenAI: openai.Adapter}, Script: links.Script}
			}
		}
		code = child.Main(ctx, child.IO(stdio), opts, links)
	} else {
		cli.HoldInheritedFDs() // as cli.Process does for a root
		code = cli.Run(ctx, stdio, os.Args[1:], Links())
	}
	os.Exit(code)
}

// Links are brood-fleet's: brood's, the Temporal fleet and the OTLP
// exporters, so that a test binary standing in for brood runs workers and
// fleet commands, and exports telemetry, itself.
func Links() cmdutil.Links {
	links := cli.Links()
	links.Fleet = fleetlink.Link{}
	links.Telemetry = otlp.Setup
	return links
}

// LinkLean makes a file named brood-child in a temporary directory that is
// this test binary (a hard link, else a copy): run as a child, it acts as
// brood-child's main does (Main), without delegation extras.
func LinkLean(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lean := filepath.Join(t.TempDir(), childexe.Name)
	if os.Link(exe, lean) == nil {
		return lean
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(lean, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return lean
}

// MainOwnState is Main for a package whose submitters keep their
// checkouts' records (taskdir.CheckoutState: capture indexes, fleet
// records) under a state home of the test binary's own, removed after
// the tests, never in the user's. A process the tests start (brood, a
// worker, a probe) inherits it and is Main.
func MainOwnState(m *testing.M, env string) {
	if os.Getenv(env) == "1" || os.Getenv("XDG_STATE_HOME") != "" {
		Main(m, env)
	}
	state, err := os.MkdirTemp("", "brood-test-state-")
	if err == nil {
		err = os.Setenv("XDG_STATE_HOME", state)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "state home:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}
