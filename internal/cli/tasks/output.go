package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/termsafe"
)

// OutputOptions are the arguments and flags of `brood tasks output`.
type OutputOptions struct {
	Factory *cmdutil.Factory
	ID      string
	Wait    bool
	Timeout time.Duration
	JSON    bool
}

// NewCmdOutput builds `brood tasks output ID`.
func NewCmdOutput(f *cmdutil.Factory, runF func(context.Context, *OutputOptions) error) *cobra.Command {
	opts := &OutputOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "output ID",
		Short: "Print a task's status and, once finished, its verified result",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return outputRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until the task finishes")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "with --wait, give up after this long")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func outputRun(ctx context.Context, opts *OutputOptions) error {
	f := opts.Factory
	t, err := dispatch.LoadTask(f.ProjectRoot, opts.ID)
	if err != nil {
		return err
	}
	d, err := f.TaskDispatcher(t, nil)
	if err != nil {
		return err
	}
	wait := opts.Timeout
	if opts.Wait && wait == 0 {
		wait = 24 * time.Hour
	}
	status, text, err := d.Output(ctx, opts.ID, wait)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, map[string]string{"task_id": opts.ID, "status": status, "output": text})
	}
	fmt.Fprintf(termsafe.NewWriter(f.Out), "status: %s\n%s\n", status, strings.TrimRight(text, "\n"))
	return nil
}
