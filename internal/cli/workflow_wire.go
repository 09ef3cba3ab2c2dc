package cli

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	workflowcmd "github.com/broodhq/brood/internal/cli/workflow"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
)

// newWorkflowCmd wires `brood workflow` to this process: its streams, the
// local engine over the root's dispatcher, and the registry's agents.
func newWorkflowCmd(app *App) *cobra.Command {
	f := &workflowcmd.Factory{
		In: app.In, Out: app.Out, Err: app.Err,
		IsTerminal: func() bool { return isTerminal(app.In) && isTerminal(app.Err) },
		Engine:     app.workflowEngine,
		Agents: func() []string {
			var names []string
			for _, d := range app.registry().All() {
				names = append(names, d.Name)
			}
			return names
		},
	}
	return workflowcmd.NewCmdWorkflow(f, nil)
}

// isTerminal reports whether a stream is a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		if lw, ok := v.(*lockedWriter); ok {
			f, ok = lw.w.(*os.File)
			if !ok {
				return false
			}
		} else {
			return false
		}
	}
	return term.IsTerminal(int(f.Fd()))
}

// workflowEngine is the local engine: the plan's agents are this process's
// children (so they count against the depth cap), quiet on stderr (the
// progress per phase is the workflow's own).
func (a *App) workflowEngine(ctx context.Context) (engine.Engine, error) {
	spec := a.Settings.Model
	if spec == "" {
		if _, err := resolveModel(a, ""); err != nil {
			return nil, err
		}
	}
	tools, _ := selectTools("")
	d, err := a.dispatcher(spec, defaultSystemPrompt(a.Cwd), tools.Names(), a.permissions(nil), nil, true)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errors.New("delegation is off here: this process is at the subagent depth cap, so it cannot start a workflow's agents")
	}
	d.SetLifetime(ctx)
	return local.New(local.Config{ProjectRoot: a.ProjectRoot, Runner: d, Concurrency: a.Settings.Pool.Concurrency}), nil
}
