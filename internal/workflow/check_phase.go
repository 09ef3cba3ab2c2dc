package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/call/jsonschema"
)

// phase checks one phase's shape-specific parts.
func (c *checker) phase(i int) {
	ph := &c.p.Phases[i]
	f := fmt.Sprintf("phases[%d]", i)
	vis := c.visible(i)
	switch ph.Shape() {
	case "parallel":
		c.parallel(f, ph, vis)
	case "each":
		c.each(f, ph, vis)
	case "until_quiet":
		u := ph.UntilQuiet
		c.call(f+".until_quiet", &u.Call, with(vis, "seen", "round"))
		if u.Key == "" {
			c.errorf(f+".until_quiet.key", "name the field that identifies a finding (dedupe key)")
		}
		if u.MaxRounds > 0 && u.QuietRounds > u.MaxRounds {
			c.warns = append(c.warns, fmt.Sprintf("%s.until_quiet: quiet_rounds %d is more than max_rounds %d: it always runs max_rounds", f, u.QuietRounds, u.MaxRounds))
		}
	case "votes":
		v := ph.Votes
		c.call(f+".votes", &v.Call, with(vis, "vote"))
		if v.Accept.Rule == "at_least" && v.Accept.AtLeast > v.Count {
			c.errorf(f+".votes.accept", "at_least %d can never be reached with count %d", v.Accept.AtLeast, v.Count)
		}
		if v.Count%2 == 0 && v.Accept.Rule == "majority" {
			c.warns = append(c.warns, fmt.Sprintf("%s.votes: an even count (%d) can tie; a tie is not a majority", f, v.Count))
		}
	}
}

func with(vis map[string]bool, names ...string) map[string]bool {
	out := make(map[string]bool, len(vis)+len(names))
	for k := range vis {
		out[k] = true
	}
	for _, n := range names {
		out[n] = true
	}
	return out
}

func (c *checker) parallel(f string, ph *Phase, vis map[string]bool) {
	ids := map[string]int{}
	for j, t := range ph.Parallel {
		if t.ID != "" {
			ids[t.ID] = j
		}
	}
	deps := map[string][]string{}
	var nodes []string
	for j := range ph.Parallel {
		t := &ph.Parallel[j]
		tf := fmt.Sprintf("%s.parallel[%d]", f, j)
		tv := vis
		for _, d := range t.DependsOn {
			if _, ok := ids[d]; !ok {
				c.errorf(tf+".depends_on", "no task of phase %q is called %q%s", ph.ID, d, didYouMean(d, sortedKeys(ids)))
				continue
			}
			tv = with(tv, d)
		}
		c.call(tf, t, tv)
		if t.ID != "" {
			nodes = append(nodes, t.ID)
			deps[t.ID] = t.DependsOn
		}
	}
	if _, cycle := Levels(nodes, deps); cycle != nil {
		c.errorf(f+".parallel", "depends_on forms a cycle: %s", strings.Join(cycle, " → "))
	}
}

func (c *checker) each(f string, ph *Phase, vis map[string]bool) {
	sel, err := ParseSelector(ph.Each)
	if err != nil {
		c.errorf(f+".each", "%v", err)
	} else {
		c.ref(f+".each", sel, vis)
	}
	as := ph.As
	if as == "" {
		as = "item"
	}
	sv := with(vis, as, "prev")
	seen := map[string]bool{}
	for j := range ph.Stages {
		st := &ph.Stages[j]
		sf := fmt.Sprintf("%s.stages[%d]", f, j)
		if len(st.DependsOn) > 0 {
			c.errorf(sf+".depends_on", "stages run in order; depends_on is for tasks of a parallel phase")
		}
		c.call(sf, st, sv)
		if st.ID != "" {
			if seen[st.ID] || c.ids[st.ID] != "" {
				c.errorf(sf+".id", "id %q is used twice", st.ID)
			}
			seen[st.ID] = true
			sv = with(sv, st.ID)
		}
	}
}

// call checks one agent call: agent, template, schema, timeout.
func (c *checker) call(f string, t *Call, vis map[string]bool) {
	if c.o.Agents != nil && t.Agent != "" && !slices.ContainsFunc(c.o.Agents, func(a string) bool { return strings.EqualFold(a, t.Agent) }) {
		c.errorf(f+".agent", "unknown agent %q%s (available: %s; brood agents lists them)", t.Agent, didYouMean(t.Agent, c.o.Agents), strings.Join(c.o.Agents, ", "))
	}
	tm, err := ParseTemplate(t.Prompt)
	if err != nil {
		c.errorf(f+".prompt", "%v", err)
	} else {
		for _, s := range tm.Selectors() {
			c.ref(f+".prompt", s, vis)
		}
	}
	if len(t.Schema) > 0 {
		if _, err := jsonschema.Compile(t.Schema); err != nil {
			c.errorf(f+".schema", "%v", err)
		}
	}
	if _, err := t.timeout(); err != nil {
		c.errorf(f+".timeout", "%v (e.g. 90s, 10m)", err)
	}
}

// ref checks that a selector names something that exists when it runs.
func (c *checker) ref(f string, s Selector, vis map[string]bool) {
	if vis[s.Root] {
		if s.Root == "inputs" {
			if len(s.steps) == 0 || s.steps[0].field == "" {
				c.errorf(f, "{{%s}}: name an input, as inputs.NAME", s)
				return
			}
			if _, ok := c.p.Inputs[s.steps[0].field]; !ok {
				c.errorf(f, "{{%s}}: the plan declares no input %q%s (inputs: %s)", s, s.steps[0].field, didYouMean(s.steps[0].field, sortedKeys(c.p.Inputs)), strings.Join(sortedKeys(c.p.Inputs), ", "))
			}
		}
		return
	}
	if _, ok := c.ids[s.Root]; ok {
		c.errorf(f, "{{%s}}: %q has not run yet here: add it (or its phase) to depends_on", s, s.Root)
		return
	}
	known := sortedKeys(vis)
	for id := range c.ids {
		known = append(known, id)
	}
	c.errorf(f, "{{%s}}: nothing is called %q%s (inputs, phase and task ids, and the phase's own names such as item and prev)", s, s.Root, didYouMean(s.Root, known))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
