package workflow

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"

	wf "github.com/broodhq/brood/internal/workflow"
)

// ValidateOptions are the flags of `brood workflow validate`.
type ValidateOptions struct {
	F      *Deps
	File   string
	Inputs []string
	JSON   bool
}

func newCmdValidate(f *Deps) *cobra.Command {
	opts := &ValidateOptions{F: f}
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a plan file: schema, ids, waves and cycles, templates, output schemas, agents",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return validateRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Inputs, "input", nil, "an input as name=value, to count each items over inputs (repeatable)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// checked is a plan that parsed and checked.
type checked struct {
	plan   *wf.Plan
	report *wf.Report
	inputs map[string]any
	est    wf.Estimate
}

// load reads, parses and checks a plan file and resolves its inputs.
func load(f *Deps, file string, pairs []string) (*checked, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the plan: %w", err)
	}
	p, err := wf.Parse(file, data)
	if err != nil {
		return nil, err
	}
	var agents []string
	if f.Agents != nil {
		agents = f.Agents()
	}
	rep, err := wf.Check(p, wf.CheckOptions{File: file, Agents: agents})
	if err != nil {
		return nil, err
	}
	given, err := wf.ParseInputFlags(pairs)
	if err != nil {
		return nil, err
	}
	in, err := wf.ResolveInputs(p, given)
	if err != nil {
		return nil, err
	}
	return &checked{plan: p, report: rep, inputs: in, est: wf.EstimatePlan(p, in)}, nil
}

func validateRun(o *ValidateOptions) error {
	c, err := load(o.F, o.File, o.Inputs)
	if err != nil {
		return &cmdutil.ExitError{Code: 1, Err: err}
	}
	if o.JSON {
		return writeJSON(o.F.Out, map[string]any{"file": o.File, "valid": true, "name": c.plan.Name, "waves": c.report.Waves, "agents": c.est.Agents, "exact": c.est.Exact, "phases": c.est.Phases, "warnings": c.report.Warnings})
	}
	fmt.Fprintf(o.F.Out, "%s: valid: %s\n", o.File, describe(c))
	for _, w := range c.report.Warnings {
		fmt.Fprintf(o.F.Out, "  warning: %s\n", w)
	}
	return nil
}

// describe is the one-line shape of a plan.
func describe(c *checked) string {
	var waves []string
	for _, w := range c.report.Waves {
		waves = append(waves, "["+strings.Join(w, " ")+"]")
	}
	return fmt.Sprintf("plan %q, %d phases in %d waves %s, %s (max_agents %d)", c.plan.Name, len(c.plan.Phases), len(c.report.Waves), strings.Join(waves, " "), c.est, maxAgents(c.plan))
}

func maxAgents(p *wf.Plan) int {
	if p.MaxAgents > 0 {
		return p.MaxAgents
	}
	return wf.DefaultMaxAgents
}
