package workflow

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// CancelOptions are the flags of `brood workflow cancel`.
type CancelOptions struct {
	F     *Deps
	RunID string
}

func newCmdCancel(f *Deps) *cobra.Command {
	opts := &CancelOptions{F: f}
	return &cobra.Command{
		Use:   "cancel RUN_ID",
		Short: "Stop a run, wherever it runs; it stays resumable",
		Args:  cobra.ExactArgs(1),

		ValidArgsFunction: f.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cancelRun(cmd.Context(), opts)
		},
	}
}

func cancelRun(ctx context.Context, o *CancelOptions) error {
	eng, id, closeFn, err := o.F.engineFor(ctx, o.RunID, false)
	if err != nil {
		return err
	}
	o.RunID = id
	defer closeFn()
	if err := eng.Cancel(ctx, o.RunID); err != nil {
		return notFound(err, o.RunID)
	}
	fmt.Fprintf(o.F.Out, "asked workflow %s to stop; its running agents stop in stages and it stays resumable (brood workflow resume %s)\n", o.RunID, o.RunID)
	return nil
}
