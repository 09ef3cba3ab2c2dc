package workflow

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"

	"github.com/broodhq/brood/internal/engine"
	wf "github.com/broodhq/brood/internal/workflow"
)

// RunOptions are the flags of `brood workflow run`.
type RunOptions struct {
	F      *Deps
	Ctx    context.Context
	File   string
	Inputs []string
	Yes    bool
	JSON   bool
}

func newCmdRun(f *Deps, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{F: f}
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Validate a plan, say how many agents it starts, ask once, and run it",
		Long: `Validate the whole plan, print the number of agents it will start (an estimate
where each or until_quiet depend on outputs) and ask once on the terminal; --yes
approves without asking (scripts). With neither a terminal nor --yes it exits 2.
Progress per phase goes to stderr; the whole result to .brood/workflows/<run_id>/result.json.`,
		Example: `  brood workflow run plan.yaml --input dir=internal
  brood workflow run plan.yaml --yes --json > result.json`,
		Args: cobra.ExactArgs(1),
		// The fleet only with --engine temporal (brood-fleet runs it then).
		Annotations: map[string]string{cmdutil.FleetAnnotation: cmdutil.FleetEngineOnly},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.Ctx = args[0], cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return runRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Inputs, "input", nil, "an input as name=value (repeatable)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "approve the run without asking")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON on stdout")
	return cmd
}

func runRun(o *RunOptions) error {
	c, err := load(o.F, o.File, o.Inputs, true)
	if err != nil {
		return err
	}
	f := o.F
	fmt.Fprintf(f.Err, "workflow %s\n", describe(c))
	for _, w := range c.report.Warnings {
		fmt.Fprintf(f.Err, "  warning: %s\n", w)
	}
	if err := approve(f, o.Yes, c); err != nil {
		return err
	}
	ctx, stop, err := f.observe(o.Ctx)
	if err != nil {
		return err
	}
	defer stop()
	eng, closeFn, err := f.runEngine(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	if u, ok := eng.(interface{ Unsigned() string }); ok && u.Unsigned() != "" {
		fmt.Fprintf(f.Err, "  warning: %s\n", u.Unsigned())
	}
	pr := newProgress(f.Err)
	res, err := eng.Run(ctx, engine.RunRequest{
		Plan: c.plan, Source: o.File, Inputs: c.inputs, Events: pr.event,
		Started: func(id string) { fmt.Fprintf(f.Err, "workflow run %s started (brood workflow show %s)\n", id, id) },
	})
	if err != nil {
		return err
	}
	return finish(f, ctx, eng, res, o.JSON)
}

// approve asks once on a terminal, unless --yes; with neither it is exit 2.
func approve(f *Deps, yes bool, c *checked) error {
	if yes {
		return nil
	}
	if f.IsTerminal == nil || !f.IsTerminal() {
		return &cmdutil.ExitError{Code: 2, Err: errors.New("workflow run needs approval: it would start " + c.est.String() + "; pass --yes to run it without a terminal to ask on")}
	}
	fmt.Fprintf(f.Err, "Start %s? [y/N] ", c.est)
	line, _ := bufio.NewReader(f.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &cmdutil.ExitError{Code: 1, Err: errors.New("not started")}
}

// finish prints a run's outcome and maps it to the exit status: 0 done,
// 1 partial or failed, 130 cancelled.
func finish(f *Deps, ctx context.Context, eng engine.Engine, res *wf.Result, asJSON bool) error {
	ref := ""
	if info, err := eng.Show(context.WithoutCancel(ctx), res.RunID); err == nil {
		ref = info.ResultRef
	}
	if asJSON {
		if err := writeJSON(f.Out, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Out, "workflow %s %s: %d agents, %d tokens", res.RunID, res.Status, res.Agents, res.Usage.Input+res.Usage.Output)
		if ref != "" {
			fmt.Fprintf(f.Out, "; result in %s", ref)
		}
		fmt.Fprintln(f.Out)
		if res.Reason != "" {
			fmt.Fprintf(f.Out, "  %s\n", res.Reason)
		}
		for _, ph := range res.Phases {
			for _, c := range ph.Calls {
				if c.Status == wf.CallNotApplied {
					fmt.Fprintf(f.Out, "  not applied %s: %s\n", c.Key, c.Error)
				}
			}
		}
		for _, line := range whyFailed(res) {
			fmt.Fprintf(f.Out, "  %s\n", line)
		}
		for _, s := range res.Skipped {
			fmt.Fprintf(f.Out, "  skipped %s: %s\n", s.ID, s.Reason)
		}
		if res.Landed != "" {
			fmt.Fprintf(f.Out, "  your tree: %s\n", res.Landed)
		}
	}
	switch res.Status {
	case wf.RunDone:
		return nil
	case wf.RunCancelled:
		return &cmdutil.ExitError{Code: 130, Err: fmt.Errorf("workflow %s cancelled; continue it with brood workflow resume %s", res.RunID, res.RunID)}
	}
	return &cmdutil.ExitError{Code: 1}
}

// whyFailed says why a run's calls failed, one line per distinct error
// (a refusal of the whole submission, say, is said once for all its
// calls): the run's own line names only its phases.
func whyFailed(res *wf.Result) []string {
	var order []string
	keys := map[string][]string{}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			if c.Output != nil || c.Error == "" || c.Status == wf.CallNotApplied || c.Status == wf.CallSkipped || c.Status == wf.CallCancelled {
				continue
			}
			if _, ok := keys[c.Error]; !ok {
				order = append(order, c.Error)
			}
			keys[c.Error] = append(keys[c.Error], c.Key)
		}
	}
	var out []string
	for _, msg := range order {
		k := keys[msg]
		who := strings.Join(k[:min(len(k), 3)], ", ")
		if len(k) > 3 {
			who += fmt.Sprintf(" and %d more", len(k)-3)
		}
		out = append(out, fmt.Sprintf("failed %s: %s", who, cmdutil.Reason(msg)))
	}
	return out
}
