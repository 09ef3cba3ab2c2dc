package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/engine"
)

// CancelOptions are the flags of `brood workflow cancel`.
type CancelOptions struct {
	F     *Deps
	RunID string
}

func newCmdCancel(f *Deps) *cobra.Command {
	opts := &CancelOptions{F: f}
	return &cobra.Command{
		Use:     "cancel RUN_ID",
		Example: `  brood workflow cancel 8XRTAB`,
		Short:   "Stop a run, wherever it runs; it stays resumable (on the fleet, also a single call by its task id)",
		Long: `Stop a run; it stays resumable (brood workflow resume RUN_ID).

On the fleet (--temporal HOST:PORT or temporal.address) this cancels the
run's workflow from any machine: each running call hears it through its
next heartbeat and stops in stages on its worker, keeping its transcript so
a resume continues it. A single call of brood subagent --engine temporal
is cancelled by its task id the same way. A run no worker has taken ends
when one takes it (or at once with temporal workflow terminate).`,
		Args: cobra.ExactArgs(1),

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
		// Not a run: a single call on the fleet, by its task id?
		if done, cerr := o.F.cancelFleetCall(ctx, o.RunID); done {
			return cerr
		}
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

// cancelFleetCall stops a single call on the fleet (brood subagent
// --engine temporal) by its task id or a unique prefix or tail of one;
// done is false when no fleet is configured or it has no such call.
func (d *Deps) cancelFleetCall(ctx context.Context, id string) (done bool, err error) {
	id = strings.ToUpper(strings.TrimSpace(id))
	if len(id) < 4 || strings.ContainsAny(id, "/\\ ") {
		return false, nil
	}
	fl, closeFn, err := d.fleet(ctx)
	if err != nil || fl == nil {
		return false, nil
	}
	defer closeFn()
	if err := fl.Cancel(ctx, id); errors.Is(err, engine.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return true, err
	}
	fmt.Fprintf(d.Out, "asked the fleet's call %s to stop; its child stops in stages and it stays resumable (brood tasks resume %s \"...\")\n", id, id)
	return true, nil
}
