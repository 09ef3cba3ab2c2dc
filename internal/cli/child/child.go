// Package child is the child end of the protocol as a program: brood run as
// a subagent by its parent, `brood --mode json --task-id ID --envelope
// PATH`. It is the whole main of the lean child binaries (LeanMain), and
// brood's own path for a child's command line (Main, with brood's Links).
// It imports no command tree (cobra, text/template) and no settings or
// agent-file parsing: what a lean binary links is what a child that cannot
// delegate runs (cmd/brood-child's test holds its deny list). What brood
// adds for a child that may delegate, or exports telemetry, comes in
// Links.Full from its command line package (cli.ChildLinks).
package child

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/broodhq/brood/internal/childrun"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/termsafe"
)

// Exit statuses, as brood's (cmdutil.ExitFailed, cmdutil.ExitUsage).
const (
	ExitFailed = 1
	ExitUsage  = 2
)

// Options are the child-protocol flags.
type Options struct {
	Envelope string
	TaskID   string
	Mode     string
	// Warm is set for a child started ahead of its task (--warm): it
	// waits for the parent's start line before it reads the envelope.
	Warm bool
}

// Active reports whether the process was started as a child.
func (o *Options) Active() bool { return o.Envelope != "" }

// IO is the process's streams and environment (cmdutil.IO's fields).
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
}

// Links are what the binary links beyond the child protocol. A lean
// binary's are its provider's SDK alone; brood's (cli.ChildLinks) add the
// scripted model and Full.
type Links struct {
	// Models build the clients of each wire API (a nil one: its specs are
	// an error).
	Models provider.Adapters
	// Script builds the scripted model (nil: a script spec is an error;
	// the parent runs brood for such a child: cmdutil.Factory.ChildExeFor).
	Script func(path string) (model.Model, error)
	// Full, when set, prepares the child as brood does (a Factory: its
	// telemetry and, for a child that may delegate, its settings, agents
	// and its own children's binary) in place of Lean; nil in a lean
	// binary, which refuses an envelope that may delegate.
	Full func(ctx context.Context, stdio IO) (Setup, error)
}

// Setup is a child's configuration, made once it is in its sandbox
// (childrun.Confine): its streams (wrapped) and its run's configuration.
type Setup struct {
	IO     IO
	Config childrun.ChildConfig
	// Begin, when set, is called once the child has its task (after a
	// warm child's start line) and completes Config (brood's telemetry);
	// the child calls what it returns at its end.
	Begin func(ctx context.Context, cfg *childrun.ChildConfig) (stop func())
}

// Lean is a lean binary's Setup: no settings file read, no telemetry (the
// redactor is RunChild's).
func Lean(stdio IO, links Links) Setup {
	stdio = Wrap(stdio)
	if c, err := telemetry.FromEnv(stdio.Getenv); err == nil && (c.Traces || c.Metrics) {
		// Its parent runs brood-fleet for children when telemetry is on, so this
		// is only said, not hidden.
		fmt.Fprintln(stdio.Err, "brood: telemetry is off: this binary links no OpenTelemetry exporter (brood-fleet does)")
	}
	getenv := stdio.Getenv
	return Setup{IO: stdio, Config: childrun.ChildConfig{
		ResolveModel: func(spec string) (model.Model, error) {
			m, err := provider.Resolve(spec, provider.Options{Getenv: getenv, Script: links.Script, Adapters: links.Models})
			if errors.Is(err, provider.ErrScriptUnavailable) {
				return nil, fmt.Errorf("model %s: this binary runs no scripted model: run it with brood", spec)
			}
			return m, err
		},
	}}
}

// Main runs a child without building a command tree: what a lean binary's
// main is (LeanMain), and brood's own path for a child command line (see
// Parse). It enters the child's sandbox (childrun.Confine, which may
// re-execute the program) before it prepares anything else: only then
// does it read settings and agent definitions, if the child may delegate
// (Links.Full), and start brood's telemetry. It returns the exit status.
func Main(ctx context.Context, stdio IO, opts Options, links Links) int {
	ctx = spawntrace.Child(ctx, stdio.Getenv) // a traced spawn's child marks "init": it is in its main
	if opts.Warm && !sandbox.Reexecuted() {
		// Started ahead of its task, already in its own process group,
		// cgroup and sandbox: nothing of the task is read until the parent
		// says start. EOF (or anything else) means it was not needed. (Its
		// sandbox's re-exec of itself, same arguments, was started: the
		// first image read the line.)
		if err := protocol.ReadStart(stdio.In); err != nil {
			return 0
		}
	}
	c, err := childrun.Confine(ctx, opts.Envelope, opts.TaskID)
	if err != nil {
		fmt.Fprintln(termsafe.NewWriter(stdio.Err), "brood:", err)
		return ExitFailed
	}
	var s Setup
	if links.Full != nil {
		if s, err = links.Full(ctx, stdio); err != nil {
			fmt.Fprintln(termsafe.NewWriter(stdio.Err), "brood:", err)
			return ExitFailed
		}
	} else {
		s = Lean(stdio, links)
	}
	if s.Begin != nil {
		defer s.Begin(ctx, &s.Config)()
	}
	if err := c.Run(ctx, Config(s.IO, opts, s.Config)); err != nil {
		fmt.Fprintln(s.IO.Err, "brood:", err)
		return ExitFailed
	}
	return 0
}

// Config is cfg with the streams, opts and what the parent says in the
// environment.
func Config(stdio IO, opts Options, cfg childrun.ChildConfig) childrun.ChildConfig {
	cfg.EnvelopePath, cfg.TaskID = opts.Envelope, opts.TaskID
	cfg.Stdout, cfg.Stdin = stdio.Out, stdio.In
	// The parent says whether a person takes questions above it; its
	// answers come down stdin, the pipe only it holds.
	cfg.AskParent = stdio.Getenv(spawn.EnvAskParent) == "1"
	// And which of its tool calls the root's hooks want to see.
	cfg.HookFilter = spawn.ParseHookFilter(stdio.Getenv(spawn.EnvHooksParent))
	return cfg
}
