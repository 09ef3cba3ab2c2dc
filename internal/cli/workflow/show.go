package workflow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/termsafe"
	wf "github.com/broodhq/brood/internal/workflow"
)

// ShowOptions are the flags of `brood workflow show`.
type ShowOptions struct {
	F     *Deps
	RunID string
	JSON  bool
}

func newCmdShow(f *Deps) *cobra.Command {
	opts := &ShowOptions{F: f}
	cmd := &cobra.Command{
		Use: "show RUN_ID",
		Example: `  brood workflow show 01KBN5Q7MZ8X
  brood workflow show 8XRTAB --json`,
		Short: "Show one run: status, counts, phases, what was skipped and why",
		Long: `Show one run: its status, agents and calls by status, its phases, and what was
skipped and why. RUN_ID is any unique prefix or tail of the run's id.

A fleet run (--temporal HOST:PORT or temporal.address) is read from the
fleet: while it runs, its calls a worker runs, those that wait for one and
the writers landing in the run's tree; once finished, its result, with what
became of its change in this tree (a writer whose change did not land is
counted not applied, not failed). When the fleet does not answer or no
longer has the run, the copy of its result this project kept is shown, and
said so.`,
		Args: cobra.ExactArgs(1),

		ValidArgsFunction: f.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.givenEngine(cmd.Flags().Changed("engine")); err != nil {
				return err
			}
			opts.RunID = args[0]
			return showRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (with the whole result)")
	return cmd
}

func showRun(ctx context.Context, o *ShowOptions) error {
	eng, id, closeFn, err := o.F.engineFor(ctx, o.RunID, false)
	if err != nil {
		return o.F.notLocal(err, o.RunID)
	}
	o.RunID = id
	defer closeFn()
	info, err := eng.Show(ctx, o.RunID)
	if kept := keptFleetRun(o.F.projectRoot(), o.RunID); errors.Is(err, engine.ErrNotFound) && kept != nil && o.F.fleetConfigured(ctx) {
		info, err = kept, nil // the fleet did not answer for it: this project's copy
	}
	if err != nil {
		return o.F.notLocal(notFound(err, o.RunID), o.RunID)
	}
	if o.JSON {
		return writeJSON(o.F.Out, info)
	}
	w := o.F.Out
	fmt.Fprintf(w, "run      %s\nplan     %s\nengine   %s\nstatus   %s\n", info.RunID, info.Plan, info.Engine, info.Status)
	if info.Reason != "" {
		fmt.Fprintf(w, "reason   %s\n", info.Reason)
	}
	if info.Origin != "" {
		fmt.Fprintf(w, "from     %s (another checkout: the run is listed here, its change lands there)\n", termsafe.Line(info.Origin))
	}
	calls := info.Calls
	if r := info.Result; r != nil && len(r.Phases) > 0 {
		// The result has every call, skipped ones too (on any engine).
		calls = map[string]int{}
		for _, ph := range r.Phases {
			for _, c := range ph.Calls {
				calls[c.Status]++
			}
		}
	}
	fmt.Fprintf(w, "agents   %s\n", agentCounts(info, calls[wf.CallNotApplied]))
	if len(calls) > 0 {
		fmt.Fprintf(w, "calls    %s\n", byStatus(calls))
	}
	if info.ResultRef != "" {
		fmt.Fprintf(w, "result   %s\n", info.ResultRef)
	}
	if r := info.Result; r != nil {
		for _, ph := range r.Phases {
			ok := 0
			for _, c := range ph.Calls {
				if c.Output != nil {
					ok++
				}
			}
			fmt.Fprintf(w, "  phase %-16s %-12s %-8s %d/%d calls with a result", ph.ID, ph.Shape, ph.Status, ok, len(ph.Calls))
			if st := callStatuses(ph.Calls); st != "" {
				fmt.Fprintf(w, "; %s", st)
			}
			if ph.Reason != "" {
				fmt.Fprintf(w, " (%s)", ph.Reason)
			}
			fmt.Fprintln(w)
			for _, c := range ph.Calls {
				if c.Status != wf.CallDone && c.Status != wf.CallSkipped {
					fmt.Fprintf(w, "    %s %s: %s\n", c.Key, c.Status, cmdutil.Reason(c.Error))
				}
				if t := callTimes(info.Engine, c); t != "" {
					fmt.Fprintf(w, "    %s %s\n", c.Key, t)
				}
			}
		}
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "  skipped %s: %s\n", s.ID, s.Reason)
		}
	}
	return nil
}

// agentCounts is the agents line of a run: a writer that finished but
// whose change did not land (not applied) is said so, not counted failed
// (the engines count it among the calls without a result).
func agentCounts(info *engine.RunInfo, notApplied int) string {
	failed := info.Failed
	if notApplied > failed {
		notApplied = failed
	}
	failed -= notApplied
	s := fmt.Sprintf("%d started, %d done, %d failed", info.Agents, info.Done, failed)
	if notApplied > 0 {
		s += fmt.Sprintf(", %d not applied", notApplied)
	}
	return s + fmt.Sprintf(", %d running", info.Running)
}

// byStatus is "3 done, 1 cancelled", the statuses in a fixed order.
func byStatus(n map[string]int) string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
	}
	return strings.Join(parts, ", ")
}

// callStatuses counts a phase's calls by status.
func callStatuses(calls []wf.CallRecord) string {
	n := map[string]int{}
	for _, c := range calls {
		n[c.Status]++
	}
	return byStatus(n)
}
