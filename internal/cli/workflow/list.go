package workflow

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/termsafe"
)

// ListOptions are the flags of `brood workflow list`.
type ListOptions struct {
	F    *Deps
	JSON bool
}

func newCmdList(f *Deps) *cobra.Command {
	opts := &ListOptions{F: f}
	cmd := &cobra.Command{
		Use: "list",
		Example: `  brood workflow list
  brood workflow list --engine local   # this project's local runs only (--engine temporal: the fleet's)
  brood workflow list --json`,
		Short: "List every workflow run, running ones from other processes included",
		Long: `List this project's workflow runs and, with a fleet
(--temporal HOST:PORT or temporal.address), the fleet's runs on its task
queue: the ENGINE column says which. A fleet run's status is the fleet's: queued (and why: no worker polls
the queue, or none is free) until a worker runs one of its calls, then
running; a finished one is judged as its submitter judged it here (its
change not applied to this tree: not done). A fleet run another checkout
submitted says where its change lands. When the fleet does not answer, the
fleet runs this project keeps the result of are listed from that copy.
--engine local lists this project's runs only, --engine temporal the
fleet's; --json has each run's usage and calls by status, on both engines.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.givenEngine(cmd.Flags().Changed("engine")); err != nil {
				return err
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func listRun(ctx context.Context, o *ListOptions) error {
	runs, err := o.F.allRuns(ctx)
	if err != nil {
		return err
	}
	if o.F.Engines.Name != "temporal" {
		// Left out, but said (as brood tasks says of tasks).
		if n := len(local.NotYours(o.F.projectRoot())); n > 0 {
			fmt.Fprintf(o.F.Err, "brood: %d workflow run(s) in %s carry no seal made with your record key (%s): not listed, not resumable. A repository shipped them, or a brood from before runs were sealed (or with another HOME or XDG_STATE_HOME) made them; docs/trust.md, \"Records a repository ships\"\n", n, local.Root(o.F.projectRoot()), taskdir.KeyPath())
		}
	}
	if o.JSON {
		if runs == nil {
			return writeJSON(o.F.Out, []any{})
		}
		return writeJSON(o.F.Out, runs)
	}
	if len(runs) == 0 && o.F.localOnly() {
		fmt.Fprintln(o.F.Out, "no local workflow runs in this project (--engine local lists no fleet run)")
		return nil
	}
	if len(runs) == 0 {
		fmt.Fprintln(o.F.Out, "no workflow runs yet; start one with brood workflow run FILE")
		return nil
	}
	tw := tabwriter.NewWriter(o.F.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tPLAN\tENGINE\tSTATUS\tAGENTS\tDONE\tFAILED\tRUNNING\tSTARTED")
	for _, r := range runs {
		if r.Origin != "" {
			r.Status += " (submitted from " + termsafe.Line(r.Origin) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.RunID, r.Plan, r.Engine, r.Status, r.Agents, r.Done, r.Failed, r.Running, r.Created.Local().Format(time.DateTime))
	}
	return tw.Flush()
}
