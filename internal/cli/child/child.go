// Package child is the child end of the protocol: brood run as a subagent
// by its parent, `brood --mode json --task-id ID --envelope PATH`. The flags
// are hidden: the protocol is brood talking to itself, not a user interface.
package child

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/childrun"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/trust"
)

// Options are the child-protocol flags.
type Options struct {
	Factory  *cmdutil.Factory
	Envelope string
	TaskID   string
	Mode     string
	// Warm is set for a child started ahead of its task (--warm): it
	// waits for the parent's start line before it reads the envelope.
	Warm bool
}

// Active reports whether the process was started as a child.
func (o *Options) Active() bool { return o.Envelope != "" }

// AddFlags puts the hidden child-protocol flags on root and returns their
// values; the root command calls Run when Active.
func AddFlags(root *cobra.Command, f *cmdutil.Factory) *Options {
	opts := &Options{Factory: f}
	fl := root.Flags()
	fl.StringVar(&opts.Envelope, "envelope", "", "run as a subagent child: the dispatch envelope to execute (set by the parent)")
	fl.StringVar(&opts.TaskID, "task-id", "", "the child's task id (with --envelope)")
	fl.StringVar(&opts.Mode, "mode", "json", "child output mode (with --envelope; always json)")
	for _, name := range []string{"envelope", "task-id", "mode"} {
		_ = fl.MarkHidden(name)
	}
	return opts
}

// Run executes the envelope as the child.
func Run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	tel, stop := f.StartTelemetry(ctx)
	defer stop()
	// Settings and agent definitions are read only by a child that may
	// delegate (Main loads the directories alone; the command tree, Load).
	loaded := f.Resolved != nil
	loadSettings := func(grant *trust.Grant, sources []string) (settings.Settings, error) {
		// Read again if the command tree read other kinds of file than
		// the root did (nil is every kind, [] none).
		same := (f.SettingSources == nil) == (sources == nil) && slices.Equal(f.SettingSources, sources)
		if !loaded || !same {
			// The project's files are gated by the root's decision, as
			// the envelope brought it down, and only the kinds of file
			// the root read are read (its --setting-sources).
			f.Inherited, f.InheritedGrant = true, grant
			f.SettingSources = sources
			if err := f.Load(); err != nil {
				return settings.Settings{}, err
			}
			loaded = true
		}
		return f.Settings, nil
	}
	return childrun.RunChild(ctx, childrun.ChildConfig{
		Telemetry:    tel,
		EnvelopePath: opts.Envelope,
		TaskID:       opts.TaskID,
		Stdout:       f.Out,
		Stdin:        f.In,
		ResolveModel: f.ResolveModel,
		LoadRegistry: func(grant *trust.Grant, sources []string) (*registry.Registry, error) {
			if _, err := loadSettings(grant, sources); err != nil {
				return nil, err
			}
			return f.Registry(), nil
		},
		LoadSettings: loadSettings,
		ExeFunc:      f.ChildExeFor, // only a child that delegates looks
		Extras:       f.Links.Delegation,
		Args:         f.ChildArgs(),
		Redact:       f.Redactor.Redact,
		// The parent says whether a person takes questions above it; its
		// answers come down stdin, the pipe only it holds.
		AskParent: f.Getenv(spawn.EnvAskParent) == "1",
		// And which of its tool calls the root's hooks want to see.
		HookFilter: spawn.ParseHookFilter(f.Getenv(spawn.EnvHooksParent)),
	})
}
