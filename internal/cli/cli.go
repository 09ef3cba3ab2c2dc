// Package cli is brood's command line: cobra commands that turn flags,
// environment and settings into one of the modes (run, demo, agents, tasks,
// the child protocol, ...). Commands hold no engine logic of their own; they
// call into agent, delegate and the packages below them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/agentscmd"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
)

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3".
var Version = "dev"

// IO is the process's streams and environment, passed in so that tests can
// run the whole CLI in-process.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
}

// App is what every command needs: the IO, the working directory, the
// project root, the home directory, and the resolved settings.
type App struct {
	IO
	Cwd         string
	ProjectRoot string // nearest ancestor with .git or .brood; Cwd if none
	Home        string
	Settings    settings.Settings
	Warnings    []string
	regDiags    []registry.Diagnostic
	rawOut      io.Writer // stdout before the lock: the TUI needs the terminal itself
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// exitError carries an exit status through cobra without printing twice.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// ExitCode wraps err so that Main exits with code. A nil err with code 1
// means "already reported".
func ExitCode(code int, err error) error { return &exitError{code: code, err: err} }

// Main runs brood with args and returns the process exit status.
func Main(ctx context.Context, stdio IO, args []string) int {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	// Children's progress and [DISPATCH] lines come from many goroutines:
	// each write to the process's streams is made whole under one lock.
	raw := stdio.Out
	stdio.Out, stdio.Err = &lockedWriter{w: stdio.Out}, &lockedWriter{w: stdio.Err}
	app := &App{IO: stdio, rawOut: raw}
	root := newRootCmd(app)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if errors.Is(err, agentscmd.ErrCheckFailed) {
		return 1 // check printed every problem already
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stdio.Err, "brood:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stdio.Err, "brood:", err)
	return 1
}

// load fills in the directories and settings. It runs before every command.
func (a *App) load() error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	a.Cwd = cwd
	a.ProjectRoot = findProjectRoot(cwd)
	a.Home = a.Getenv("HOME")
	s, w, err := settings.Load(settings.Sources{ProjectRoot: a.ProjectRoot, Home: a.Home, Getenv: a.Getenv})
	if err != nil {
		return err
	}
	a.Settings, a.Warnings = s, w
	return nil
}

// findProjectRoot returns the nearest ancestor of dir holding .git or
// .brood, or dir itself when there is none.
func findProjectRoot(dir string) string {
	for d := dir; ; {
		for _, marker := range []string{".git", ".brood"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

func newRootCmd(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "brood",
		Short: "A runtime for coding agents that delegate to subagents in isolated child processes",
		Long: `brood runs an LLM coding agent whose main skill is delegation: the agent hands
self-contained work to specialised subagents (explore, plan, general-purpose, or
your own Claude Code agent files) that run as isolated child processes, bounded
in depth, number and wall-clock time, and gets back only a verified, compact result.

Start with:
  brood                           the interactive mode (on a terminal; --continue or --resume ID reopens a session)
  brood demo                      a scripted run over this directory (no API key needed)
  brood run "fix the flaky test"  one agent to completion (needs a model, see below)
  brood agents                    the subagents brood can delegate to

Models are chosen as provider/model with --model, BROOD_MODEL or model = "..." in
.brood/settings.toml: anthropic/claude-sonnet-5-5 (ANTHROPIC_API_KEY), openai/gpt-5
(OPENAI_API_KEY, OPENAI_BASE_URL), ollama/qwen3, vllm/..., llamacpp/...,
or script:FILE for the offline scripted model.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return app.load()
		},
	}
	root.AddCommand(newRunCmd(app), newDemoCmd(app), newVersionCmd(app))
	addChildProtocol(root, app)
	addExtraCommands(root, app)
	return root
}

func newVersionCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print brood's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(app.Out, "brood", Version)
			return nil
		},
	}
}
