package workflow

import (
	"context"
	"errors"
	"os"

	"golang.org/x/term"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/worker"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/telemetry"
)

// depsFrom takes the verbs' needs from the factory. Settings are loaded by
// the root command before a verb runs, so everything is read lazily.
func depsFrom(f *cmdutil.Factory, fleetFlags *worker.FleetFlags) *Deps {
	return &Deps{
		In: f.In, Out: f.Out, Err: f.Err,
		IsTerminal: func() bool {
			in, ok := f.In.(*os.File)
			return ok && term.IsTerminal(int(in.Fd())) && f.Getenv("CI") == ""
		},
		Engine:  func(ctx context.Context) (engine.Engine, error) { return localEngine(ctx, f) },
		Records: func() engine.Engine { return local.New(local.Config{ProjectRoot: f.ProjectRoot}) },
		Engines: Engines{Fleet: func(ctx context.Context) (engine.Engine, func(), bool, error) {
			if !fleetFlags.Configured(f) {
				return nil, func() {}, false, nil
			}
			e, closeFn, err := worker.Engine(ctx, f, *fleetFlags)
			if err != nil {
				return nil, func() {}, true, err
			}
			return e, closeFn, true, nil
		}},
		Observe: func(ctx context.Context) (context.Context, func(), error) {
			hk, err := f.OpenHooks(ctx, "", "", "")
			if err != nil {
				return ctx, nil, err
			}
			t, stop := f.StartTelemetry(ctx)
			return cmdutil.WithHooks(telemetry.NewContext(ctx, t), hk), func() { hk.Close(); stop() }, nil
		},
		Agents: func() []string {
			var names []string
			for _, d := range f.Registry().All() {
				names = append(names, d.Name)
			}
			return names
		},
	}
}

// localEngine is the local engine over this process's dispatcher: a plan's
// agents are this process's children (so they count against the depth
// cap), quiet on stderr (the progress per phase is the workflow's own).
func localEngine(ctx context.Context, f *cmdutil.Factory) (engine.Engine, error) {
	spec := f.Settings.Model
	if spec == "" {
		if _, err := f.ResolveModel(""); err != nil {
			return nil, err
		}
	}
	tools, _ := cmdutil.SelectTools("")
	d, err := f.Dispatcher(cmdutil.DispatcherConfig{
		Model: spec, System: cmdutil.DefaultSystemPrompt(f.Cwd), Tools: tools.Names(),
		Permissions: f.Permissions(cmdutil.PermissionFlags{}), Quiet: true,
		OnEvent: cmdutil.HooksFrom(ctx).Observe(nil),
	})
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errors.New("delegation is off here: this process is at the subagent depth cap, so it cannot start a workflow's agents")
	}
	d.SetLifetime(ctx)
	cmdutil.HooksFrom(ctx).Attach(d)
	return local.New(local.Config{ProjectRoot: f.ProjectRoot, Runner: d, Concurrency: f.Settings.Pool.Concurrency}), nil
}
