package run

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// demoPrompt is what `brood demo` asks the scripted root agent.
const demoPrompt = "Give me a tour of this directory: what is here and what is it for?"

// NewCmdDemo builds `brood demo`: brood's main job run offline over the
// current directory with the built-in scripted model, as brood run runs
// it. runF replaces the run (tests of the flags).
func NewCmdDemo(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:     "demo",
		Example: `  brood demo`,
		Short:   "Run brood's main job offline over this directory, with the scripted model",
		Long: `Run a real, multi-turn, tool-using agent over the current directory with the
built-in scripted model: no API key and no network needed. The tools, the
transcript and the event stream are the real ones.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Model == "" {
				opts.Model = "script"
			}
			opts.Args = []string{demoPrompt}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	opts.BindFlags(cmd)
	return cmd
}
