package cli

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/childrun"
	"github.com/broodhq/brood/internal/cli/child"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/mcpclient"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
)

// ChildLinks are brood's links as a child's (child.Main): its models, the
// scripted one, and a child prepared through a Factory (childSetup), which
// reads settings and agent definitions only if the child may delegate.
func ChildLinks(links cmdutil.Links) child.Links {
	return child.Links{
		Models: links.Models,
		Script: func(path string) (model.Model, error) { return script.Load(path) },
		Full: func(_ context.Context, stdio child.IO) (child.Setup, error) {
			f := cmdutil.NewFactory(cmdutil.IO(stdio))
			f.Links = links
			if err := f.LoadDirs(); err != nil {
				return child.Setup{}, err
			}
			return childSetup(f), nil
		},
	}
}

// addChildFlags puts the hidden child-protocol flags on root and returns
// their values; the root command runs the child when Active (runChild).
func addChildFlags(root *cobra.Command) *child.Options {
	opts := &child.Options{}
	fl := root.Flags()
	fl.StringVar(&opts.Envelope, "envelope", "", "run as a subagent child: the dispatch envelope to execute (set by the parent)")
	fl.StringVar(&opts.TaskID, "task-id", "", "the child's task id (with --envelope)")
	fl.StringVar(&opts.Mode, "mode", "json", "child output mode (with --envelope; always json)")
	for _, name := range []string{"envelope", "task-id", "mode"} {
		_ = fl.MarkHidden(name)
	}
	return opts
}

// childLine reports whether cmd is the root command run as a child
// (--envelope): its pre-run then reads no settings and starts no
// telemetry, which under this process's own reading of the trust store
// would apply a project's env (an OTLP endpoint, a model's base URL)
// the root did not grant.
func childLine(cmd *cobra.Command) bool {
	fl := cmd.Flags().Lookup("envelope")
	return cmd == cmd.Root() && fl != nil && fl.Value.String() != ""
}

// runChild executes the envelope as the child under the command tree's
// Factory (a child command line with more than the protocol's flags:
// BROOD_CHILD_ARGS). It enters the child's sandbox first, as child.Main
// does, and what the command tree read of the settings under its own
// reading of the trust store is never the child's: childSetup reads them
// again under the envelope's grant.
func runChild(ctx context.Context, f *cmdutil.Factory, opts child.Options) error {
	c, err := childrun.Confine(ctx, opts.Envelope, opts.TaskID)
	if err != nil {
		return err
	}
	s := childSetup(f)
	defer s.Begin(ctx, &s.Config)()
	return c.Run(ctx, child.Config(s.IO, opts, s.Config))
}

// childSetup is a child's configuration from f: its telemetry (Begin), its
// MCP servers, and for a child that may delegate its settings and agent definitions (read
// when it asks), the binary its own children run and the delegation extras.
func childSetup(f *cmdutil.Factory) child.Setup {
	// Settings and agent definitions are read only by a child that may
	// delegate, and only under the root's decision (whatever f read
	// before: the command tree reads them under this process's own
	// reading of the trust store).
	var read bool
	var readSources []string
	loadSettings := func(grant *trust.Grant, sources []string) (settings.Settings, error) {
		// Read again if asked for other kinds of file than last time (nil
		// is every kind, [] none).
		same := (readSources == nil) == (sources == nil) && slices.Equal(readSources, sources)
		if !read || !same {
			// The project's files are gated by the root's decision, as
			// the envelope brought it down, and only the kinds of file
			// the root read are read (its --setting-sources).
			f.Inherited, f.InheritedGrant = true, grant
			f.SettingSources = sources
			if err := f.Load(); err != nil {
				return settings.Settings{}, err
			}
			read, readSources = true, sources
		}
		return f.Settings, nil
	}
	return child.Setup{
		IO: child.IO(f.IO),
		Config: childrun.ChildConfig{
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
			ConnectMCP: func(ctx context.Context, env *dispatch.Envelope, workspace string) childrun.MCPTools {
				return mcpclient.ForChild(ctx, env, workspace)
			},
		},
		Begin: func(ctx context.Context, cfg *childrun.ChildConfig) func() {
			tel, stop := f.StartTelemetry(ctx)
			cfg.Telemetry = tel
			return stop
		},
	}
}
