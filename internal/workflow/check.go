package workflow

import (
	"fmt"
	"slices"
	"strings"
)

// CheckOptions are what a check knows beyond the plan.
type CheckOptions struct {
	File string
	// Agents are the agent types that exist (nil: not checked).
	Agents []string
	// Inputs are the run's resolved inputs (nil: the plan's defaults): an
	// each over an input's list is counted against max_agents by them.
	Inputs map[string]any
}

// Report is the outcome of a successful check.
type Report struct {
	Warnings []string
	Waves    [][]string // phase ids, wave by wave
	Estimate Estimate
}

// reservedNames are the names a template may use besides ids.
func reservedNames() []string { return []string{"inputs", "item", "prev", "seen", "round", "vote"} }

// checker accumulates the problems of one plan.
type checker struct {
	p     *Plan
	o     CheckOptions
	errs  Errors
	warns []string
	// ids are every phase and task id, mapped to their phase.
	ids map[string]string
}

func (c *checker) errorf(field, format string, args ...any) {
	c.errs = append(c.errs, &Error{File: c.o.File, Line: c.p.Line(field), Field: field, Message: fmt.Sprintf(format, args...)})
}

// Check checks what the schema cannot: unique ids, waves without cycles,
// templates that name only what exists when they run, output schemas that
// compile, agents that exist, and the agent count against max_agents.
func Check(p *Plan, o CheckOptions) (*Report, error) {
	c := &checker{p: p, o: o, ids: map[string]string{}}
	c.ids_()
	c.inputs()
	waves := c.waves()
	for i := range p.Phases {
		c.phase(i)
	}
	in := o.Inputs
	if in == nil {
		in = DefaultInputs(p)
	}
	est := EstimatePlan(p, in)
	if max := p.maxAgents(); est.Min > max {
		field, why := "max_agents", ""
		if p.MaxAgents == 0 {
			field = "phases"
		}
		big := 0
		for i, pe := range est.Phases {
			if pe.Min > est.Phases[big].Min {
				big = i
			}
		}
		for i, pe := range est.Phases[big : big+1] {
			i += big
			if pe.Min > max/2 {
				why = fmt.Sprintf(" (phase %s alone starts at least %d", pe.ID, pe.Min)
				if ph := &p.Phases[i]; ph.Shape() == "each" {
					why += fmt.Sprintf(": one per item of %s", ph.Each)
				}
				why += ")"
				if p.MaxAgents == 0 {
					field = fmt.Sprintf("phases[%d]", i)
				}
				break
			}
		}
		c.errorf(field, "the plan starts at least %d agents%s, over max_agents %d: raise max_agents or shrink the plan", est.Min, why, max)
	}
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return &Report{Warnings: c.warns, Waves: waves, Estimate: est}, nil
}

// inputs checks that every default is of its input's type.
func (c *checker) inputs() {
	for _, name := range sortedKeys(c.p.Inputs) {
		if _, err := DefaultValue(c.p.Inputs[name]); err != nil {
			c.errorf("inputs."+name+".default", "%v", err)
		}
	}
}

// DefaultInputs are the plan's inputs as a run without --input sees them
// (a required input without a default is left out).
func DefaultInputs(p *Plan) map[string]any {
	out := map[string]any{}
	for name, in := range p.Inputs {
		if v, err := DefaultValue(in); err == nil && v != nil {
			out[name] = v
		}
	}
	return out
}

func (p *Plan) maxAgents() int {
	if p.MaxAgents > 0 {
		return p.MaxAgents
	}
	return DefaultMaxAgents
}

func (c *checker) ids_() {
	for i, ph := range c.p.Phases {
		f := fmt.Sprintf("phases[%d].id", i)
		c.claim(f, ph.ID, ph.ID)
		for j, t := range ph.Parallel {
			if t.ID != "" {
				c.claim(fmt.Sprintf("phases[%d].parallel[%d].id", i, j), t.ID, ph.ID)
			}
		}
	}
}

func (c *checker) claim(field, id, phase string) {
	if slices.Contains(reservedNames(), id) {
		c.errorf(field, "%q is a reserved name (%s); pick another id", id, strings.Join(reservedNames(), ", "))
		return
	}
	if _, dup := c.ids[id]; dup {
		c.errorf(field, "id %q is used twice; every phase and task id must be unique", id)
		return
	}
	c.ids[id] = phase
}

// waves orders the phases into waves and reports cycles.
func (c *checker) waves() [][]string {
	deps := map[string][]string{}
	prev := ""
	for i, ph := range c.p.Phases {
		for _, d := range ph.Deps(prev) {
			if d == ph.ID {
				c.errorf(fmt.Sprintf("phases[%d].depends_on", i), "phase %q depends on itself", ph.ID)
				continue
			}
			if !c.isPhase(d) {
				c.errorf(fmt.Sprintf("phases[%d].depends_on", i), "no phase is called %q%s (phases: %s)", d, didYouMean(d, c.phaseIDs()), strings.Join(c.phaseIDs(), ", "))
				continue
			}
			deps[ph.ID] = append(deps[ph.ID], d)
		}
		prev = ph.ID
	}
	w, cycle := Levels(c.phaseIDs(), deps)
	if cycle != nil {
		c.errorf(fmt.Sprintf("phases[%d].depends_on", slices.Index(c.phaseIDs(), cycle[0])), "depends_on forms a cycle: %s", strings.Join(cycle, " → "))
	}
	return w
}

func (c *checker) isPhase(id string) bool {
	return slices.ContainsFunc(c.p.Phases, func(p Phase) bool { return p.ID == id })
}

func (c *checker) phaseIDs() []string {
	out := make([]string, len(c.p.Phases))
	for i, p := range c.p.Phases {
		out[i] = p.ID
	}
	return out
}

// Levels orders nodes into waves (each node after all of its deps), in the
// nodes' own order within a wave. On a cycle it returns the cycle.
func Levels(nodes []string, deps map[string][]string) ([][]string, []string) {
	level := map[string]int{}
	state := map[string]int{} // 0 new, 1 visiting, 2 done
	var stack []string
	var cycle []string
	var visit func(n string) int
	visit = func(n string) int {
		switch state[n] {
		case 2:
			return level[n]
		case 1:
			i := slices.Index(stack, n)
			cycle = append(slices.Clone(stack[i:]), n)
			return 0
		}
		state[n] = 1
		stack = append(stack, n)
		l := 0
		for _, d := range deps[n] {
			if cycle != nil {
				break
			}
			l = max(l, visit(d)+1)
		}
		stack = stack[:len(stack)-1]
		state[n], level[n] = 2, l
		return l
	}
	for _, n := range nodes {
		if cycle == nil {
			visit(n)
		}
	}
	if cycle != nil {
		return nil, cycle
	}
	var waves [][]string
	for _, n := range nodes {
		l := level[n]
		for len(waves) <= l {
			waves = append(waves, nil)
		}
		waves[l] = append(waves[l], n)
	}
	return waves, nil
}

// ancestors are the phases a phase runs after (transitively).
func (c *checker) ancestors(i int) map[string]bool {
	byID := map[string]int{}
	for j, p := range c.p.Phases {
		byID[p.ID] = j
	}
	out := map[string]bool{}
	var walk func(j int)
	walk = func(j int) {
		prev := ""
		if j > 0 {
			prev = c.p.Phases[j-1].ID
		}
		for _, d := range c.p.Phases[j].Deps(prev) {
			if k, ok := byID[d]; ok && !out[d] {
				out[d] = true
				walk(k)
			}
		}
	}
	walk(i)
	return out
}

// visible is what a template in phase i may name, besides its shape's own
// names: inputs, and the phases (and their tasks) it runs after.
func (c *checker) visible(i int) map[string]bool {
	vis := map[string]bool{"inputs": true}
	for ph := range c.ancestors(i) {
		vis[ph] = true
	}
	for id, ph := range c.ids {
		if vis[ph] {
			vis[id] = true
		}
	}
	return vis
}
