package workflow

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
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
		Use:     "validate FILE",
		Example: `  brood workflow validate examples/workflows/bug-hunt.yaml`,
		Short:   "Check a plan file (schema, ids, waves and cycles, templates, output schemas, agents, max_agents) and list its inputs",
		Args:    cobra.ExactArgs(1),
		// It reads no fleet: brood runs it even when one is configured.
		Annotations: map[string]string{cmdutil.FleetAnnotation: cmdutil.FleetEngineOnly},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return validateRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Inputs, "input", nil, "an input as name=value, as a run would get it (repeatable); without it, the defaults")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// checked is a plan that parsed and checked.
type checked struct {
	plan   *wf.Plan
	report *wf.Report
	inputs map[string]any
	est    wf.Estimate
	// missing are required inputs not given (validate only: a run
	// refuses them).
	missing []string
}

// load reads, parses and checks a plan file and resolves its inputs. A
// run needs every required input; validate (forRun false) checks the plan
// without them, as inputs belong to a run. A plan that does not hold is
// exit 1; inputs that do not fit it are a usage error (exit 2).
func load(f *Deps, file string, pairs []string, forRun bool) (*checked, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: 1, Err: fmt.Errorf("read the plan: %w", err)}
	}
	p, err := wf.Parse(file, data)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: 1, Err: err}
	}
	given, err := wf.ParseInputFlags(pairs)
	if err != nil {
		return nil, cmdutil.UsageError("%v", err)
	}
	var missing []string
	if !forRun {
		missing = notGiven(p, given)
	}
	in, err := wf.ResolveInputs(optional(p, missing), given)
	if err != nil {
		if _, ok := err.(*wf.Error); ok {
			return nil, &cmdutil.ExitError{Code: 1, Err: err}
		}
		return nil, cmdutil.UsageError("%v", err)
	}
	var agents []string
	if f.Agents != nil {
		agents = f.Agents()
	}
	rep, err := wf.Check(p, wf.CheckOptions{File: file, Agents: agents, Inputs: in})
	if err != nil {
		return nil, &cmdutil.ExitError{Code: 1, Err: err}
	}
	c := &checked{plan: p, report: rep, inputs: in, est: wf.EstimatePlan(p, in), missing: missing}
	c.report.Warnings = append(c.report.Warnings, emptyEach(p, in)...)
	return c, nil
}

// notGiven are the required inputs the command line leaves out.
func notGiven(p *wf.Plan, given map[string]string) []string {
	var out []string
	for name, in := range p.Inputs {
		if _, ok := given[name]; in.Required && !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// optional is p with the named inputs no longer required.
func optional(p *wf.Plan, names []string) *wf.Plan {
	if len(names) == 0 {
		return p
	}
	q := *p
	q.Inputs = maps.Clone(p.Inputs)
	for _, n := range names {
		in := q.Inputs[n]
		in.Required = false
		q.Inputs[n] = in
	}
	return &q
}

// emptyEach warns of an each over an input list that holds nothing: it
// would start no agent.
func emptyEach(p *wf.Plan, in map[string]any) []string {
	var out []string
	for _, ph := range p.Phases {
		sel, err := wf.ParseSelector(ph.Each)
		if ph.Shape() != "each" || err != nil || sel.Root != "inputs" {
			continue
		}
		if v, err := sel.Eval(map[string]any{"inputs": in}); err == nil {
			if l, ok := v.([]any); ok && len(l) == 0 {
				out = append(out, fmt.Sprintf("phase %s: each over %s has no items: it starts no agent", ph.ID, ph.Each))
			}
		}
	}
	return out
}

func validateRun(o *ValidateOptions) error {
	c, err := load(o.F, o.File, o.Inputs, false)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.F.Out, map[string]any{"file": o.File, "valid": true, "name": c.plan.Name, "waves": c.report.Waves, "agents": c.est.Agents, "exact": c.est.Exact, "phases": c.est.Phases, "warnings": c.report.Warnings, "inputs": inputList(c)})
	}
	fmt.Fprintf(o.F.Out, "%s: valid: %s\n", o.File, describe(c))
	for _, in := range inputList(c) {
		fmt.Fprintf(o.F.Out, "  input %s\n", in.line())
	}
	for _, w := range c.report.Warnings {
		fmt.Fprintf(o.F.Out, "  warning: %s\n", w)
	}
	return nil
}

// inputInfo is one declared input as validate lists it.
type inputInfo struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	Given       bool   `json:"given"`
	Value       any    `json:"value,omitempty"`
	Description string `json:"description,omitempty"`
}

func (in inputInfo) line() string {
	s := in.Name + " (" + in.Type
	if in.Required {
		s += ", required"
	}
	s += ")"
	switch {
	case in.Required && !in.Given:
		s += ": not given; a run needs --input " + in.Name + "=VALUE"
	case in.Value != nil:
		b, _ := json.Marshal(in.Value)
		s += " = " + string(b)
	}
	if in.Description != "" {
		s += " — " + in.Description
	}
	return s
}

// inputList is the plan's inputs, each with the value a run would get.
func inputList(c *checked) []inputInfo {
	var out []inputInfo
	for _, name := range slices.Sorted(maps.Keys(c.plan.Inputs)) {
		in := c.plan.Inputs[name]
		typ := in.Type
		if typ == "" {
			typ = "string"
		}
		out = append(out, inputInfo{Name: name, Type: typ, Required: in.Required, Given: !slices.Contains(c.missing, name), Value: c.inputs[name], Description: in.Description})
	}
	return out
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
