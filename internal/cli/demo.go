package cli

import (
	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/agentscmd"
	"github.com/broodhq/brood/internal/cli/benchcmd"
	"github.com/broodhq/brood/internal/cli/doctorcmd"
	"github.com/broodhq/brood/internal/registry"
)

func newDemoCmd(app *App) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run brood's main job offline over this directory, with the scripted model",
		Long: `Run a real, multi-turn, tool-using agent over the current directory with the
built-in scripted model: no API key and no network needed. The tools, the
transcript and the event stream are the real ones.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Model == "" {
				o.Model = "script"
			}
			return runAgent(cmd.Context(), app, &o, "Give me a tour of this directory: what is here and what is it for?")
		},
	}
	o.bind(cmd)
	return cmd
}

// addExtraCommands wires the commands that live in their own packages.
func addExtraCommands(root *cobra.Command, app *App) {
	agents := agentscmd.NewCmd(agentscmd.Options{Registry: func() (registry.Options, error) {
		return app.registryOptions(), nil
	}})
	root.AddCommand(agents, newTasksCmd(app), newSubagentCmd(app), doctorcmd.NewCmd(), benchcmd.NewCmd(), newMCPCmd(app), newWorkflowCmd(app))
}
