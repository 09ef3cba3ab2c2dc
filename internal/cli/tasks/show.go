package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/termsafe"
)

// ShowOptions are the arguments of `brood tasks show`.
type ShowOptions struct {
	Factory *cmdutil.Factory
	ID      string
	JSON    bool
	Fleet   root.FleetFlags
}

// NewCmdShow builds `brood tasks show ID`.
func NewCmdShow(f *cmdutil.Factory, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Factory: f}
	cmd := &cobra.Command{
		Use: "show ID",
		Example: `  brood tasks show 01KBN5Q7MZ8X    # any unique prefix
  brood tasks show 8XRTAB          # or tail of the id
  brood tasks show 8XRTAB --json`,
		Short:             "Print a dispatch's envelope, result, process outcome and dispatch log",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.CompleteTaskIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			id, err := f.ResolveTaskID(opts.ID)
			if err != nil {
				// Not here: a call on the fleet, when one is configured.
				if ft, ferr := root.FleetCall(cmd.Context(), f, opts.Fleet, opts.ID); ferr == nil {
					return showFleet(opts, ft)
				} else if !errors.Is(ferr, engine.ErrNotFound) {
					return fmt.Errorf("%v (and the fleet: %v)", err, ferr)
				}
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(opts)
			}
			return showRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	opts.Fleet.AddFlags(cmd)
	return cmd
}

// showFleet prints a call on the fleet: its status, where it runs (worker,
// attempt, last heartbeat) and, once ended, its result.
func showFleet(opts *ShowOptions, t *root.FleetTaskDetail) error {
	f := opts.Factory
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, t)
	}
	w := termsafe.NewWriter(f.Out)
	fmt.Fprintf(w, "task     %s (on the fleet: Temporal workflow %s)\nagent    %s\nstatus   %s\ncreated  %s\n",
		t.ID, t.Workflow, termsafe.Line(t.Agent), t.Status, t.Created.Format(time.RFC3339))
	if t.Description != "" {
		fmt.Fprintf(w, "brief    %s\n", termsafe.Line(t.Description))
	}
	switch {
	case t.Worker != "" && t.Result != nil:
		fmt.Fprintf(w, "worker   %s (ran it; %d attempt(s) on the fleet)\n", termsafe.Line(t.Worker), t.Attempt)
	case t.Worker != "":
		fmt.Fprintf(w, "worker   %s (attempt %d)\n", termsafe.Line(t.Worker), t.Attempt)
	}
	if hb := t.Heartbeat; hb != nil && !hb.Transcript.IsZero() {
		fmt.Fprintf(w, "transcript  %d bytes in the store (%s)\n", hb.Position, hb.Transcript)
	}
	if t.LastFailure != "" {
		fmt.Fprintf(w, "last failure  %s\n", termsafe.Line(t.LastFailure))
	}
	if r := t.Result; r != nil {
		fmt.Fprintf(w, "\nresult (%s, %d run(s) of the agent, %d tokens in, %d out):\n%s\n", r.Status, r.Attempts, r.Usage.Input, r.Usage.Output, r.Summary)
		for _, x := range r.Failures {
			fmt.Fprintf(w, "failure  %s\n", termsafe.Line(x))
		}
		if len(r.FilesChanged) > 0 {
			fmt.Fprintf(w, "files    %s\n", strings.Join(r.FilesChanged, ", "))
		}
	}
	if t.Landed != "" {
		fmt.Fprintf(w, "change   %s\n", termsafe.Line(t.Landed))
	}
	return nil
}

func showRun(opts *ShowOptions) error {
	f := opts.Factory
	t, err := dispatch.LoadTask(f.ProjectRoot, opts.ID)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, t)
	}
	w := termsafe.NewWriter(f.Out)
	fmt.Fprintf(w, "task     %s\nagent    %s\nstatus   %s\n", t.ID, t.Agent, t.Status)
	if t.Note != "" {
		fmt.Fprintf(w, "note     %s\n", t.Note)
	}
	fmt.Fprintf(w, "dir      %s\n", t.Dir)
	for _, c := range concerns(t) {
		fmt.Fprintf(w, "concern  %s\n", termsafe.Line(c))
	}
	if copies, err := isolate.Leftovers(context.Background(), copyRepo(f.ProjectRoot, t), t.ID, t.Files().Path()); err == nil {
		for _, c := range copies {
			if c.Unapplied {
				fmt.Fprintf(w, "copy     %s (%s) holds work never applied. %s\n", c.Path, c.Mode, copyHint(t.ID, c))
			} else {
				fmt.Fprintf(w, "copy     %s (%s), its work is in the tree: brood tasks prune removes it\n", c.Path, c.Mode)
			}
		}
	}
	for _, part := range []struct {
		name string
		v    any
	}{{"verdict (the parent's)", t.Verdict}, {"owner (the parent's)", t.Owner}, {"kill", t.Kill},
		{"envelope", t.Envelope}, {"result", t.Result}, {"output", t.Output}, {"dispatch log", t.Log}} {
		if part.name == "kill" && t.Kill == nil {
			continue // only a task a person stopped has one
		}
		if part.v == nil || isNilPtr(part.v) {
			fmt.Fprintf(w, "\n── %s: none\n", part.name)
			continue
		}
		fmt.Fprintf(w, "\n── %s\n", part.name)
		b, _ := json.MarshalIndent(part.v, "", "  ")
		fmt.Fprintln(w, string(b))
	}
	return nil
}

func isNilPtr(v any) bool {
	switch x := v.(type) {
	case *dispatch.Envelope:
		return x == nil
	case *dispatch.Result:
		return x == nil
	case *dispatch.Output:
		return x == nil
	case *dispatch.Log:
		return x == nil
	case *dispatch.Verdict:
		return x == nil
	case *dispatch.Owner:
		return x == nil
	case *dispatch.Kill:
		return x == nil
	}
	return false
}
