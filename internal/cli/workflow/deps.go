package workflow

import (
	"context"
	"os"

	"golang.org/x/term"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/telemetry"
)

// depsFrom takes the verbs' needs from the factory. Settings are loaded by
// the root command before a verb runs, so everything is read lazily. The
// root (package root: the user's hooks, telemetry, the dispatcher) is
// assembled when a run starts (Observe) and its local engine runs on it.
func depsFrom(f *cmdutil.Factory, fleetFlags *root.FleetFlags) *Deps {
	var rt *root.Root // assembled by Observe
	return &Deps{
		In: f.In, Out: f.Out, Err: f.Err,
		IsTerminal: func() bool {
			in, ok := f.In.(*os.File)
			return ok && term.IsTerminal(int(in.Fd())) && f.Getenv("CI") == ""
		},
		Engine: func(ctx context.Context) (engine.Engine, error) {
			if rt == nil {
				// Not observed (no hooks): a root of its own, for as long
				// as the run.
				r, err := root.New(ctx, f, root.Options{Quiet: true, Unobserved: true})
				if err != nil {
					return nil, err
				}
				context.AfterFunc(ctx, r.Close)
				rt = r
			}
			return localEngine(ctx, f, rt)
		},
		Records:     func() engine.Engine { return root.Records(f) },
		ProjectRoot: func() string { return f.ProjectRoot },
		Engines: Engines{Fleet: func(ctx context.Context) (engine.Engine, func(), bool, error) {
			if !fleetFlags.Configured(f) {
				return nil, func() {}, false, nil
			}
			e, closeFn, err := root.OpenFleet(ctx, f, *fleetFlags)
			if err != nil {
				return nil, func() {}, true, err
			}
			return e, closeFn, true, nil
		}},
		Observe: func(ctx context.Context) (context.Context, func(), error) {
			// Quiet: the progress per phase is the workflow's own.
			r, err := root.New(ctx, f, root.Options{Quiet: true})
			if err != nil {
				return ctx, nil, err
			}
			rt = r
			return telemetry.NewContext(ctx, r.Telemetry), r.Close, nil
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

// localEngine is the local engine over the root's dispatcher: a plan's
// agents are this process's children (so they count against the depth
// cap).
func localEngine(ctx context.Context, f *cmdutil.Factory, rt *root.Root) (engine.Engine, error) {
	if f.Settings.Model == "" {
		if _, err := f.ResolveModel(""); err != nil {
			return nil, err
		}
	}
	if _, err := rt.MustDispatch("start a workflow's agents"); err != nil {
		return nil, err
	}
	e, _, err := rt.Engine(ctx, root.EngineFlags{Name: root.Local})
	return e, err
}
