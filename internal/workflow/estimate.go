package workflow

import (
	"cmp"
	"fmt"
	"strings"
)

// Estimate is how many agents a plan will start.
type Estimate struct {
	// Agents is the expected count; Min the least it can be (an each over
	// outputs may have no items) and Max the most (until_quiet at its
	// max_rounds). Exact is set when nothing depends on outputs.
	Agents, Min, Max int
	Exact            bool
	Phases           []PhaseEstimate
	// Assumed are the each phases whose items come from earlier outputs,
	// counted as their expect: (or DefaultEachGuess) items: Max is no
	// upper bound then, an each starts as many as its items.
	Assumed []AssumedEach
}

// AssumedEach is an each phase counted from an assumed number of items.
type AssumedEach struct {
	Phase  string
	Items  int
	Expect bool // the plan's expect: says it (else the default guess)
}

// PhaseEstimate is one phase's share.
type PhaseEstimate struct {
	ID     string `json:"id"`
	Agents int    `json:"agents"`
	Min    int    `json:"min"`
	Note   string `json:"note,omitempty"`
}

// String is the line printed before a run asks for approval.
func (e Estimate) String() string {
	if e.Exact {
		return fmt.Sprintf("%d agents", e.Agents)
	}
	if len(e.Assumed) == 0 {
		return fmt.Sprintf("about %d agents (between %d and %d: some counts depend on earlier outputs)", e.Agents, e.Min, e.Max)
	}
	var parts []string
	guessed := false
	for _, a := range e.Assumed {
		why := "its expect:"
		if !a.Expect {
			why, guessed = "a guess", true
		}
		parts = append(parts, fmt.Sprintf("%d items in each phase %s (%s)", a.Items, a.Phase, why))
	}
	s := fmt.Sprintf("about %d agents, at least %d; it assumes %s: an each starts one per item its earlier output gives, more or fewer", e.Agents, e.Min, strings.Join(parts, ", "))
	if guessed {
		s += " (set expect: to say how many)"
	}
	return s
}

// EstimatePlan counts the agents of a plan; an each over inputs is counted
// from the inputs when they are given.
func EstimatePlan(p *Plan, inputs map[string]any) Estimate {
	e := Estimate{Exact: true}
	for _, ph := range p.Phases {
		n, lo, hi, note := phaseEstimate(&ph, inputs)
		if note != "" {
			e.Exact = false
		}
		if ph.Shape() == "each" && note != "" {
			e.Assumed = append(e.Assumed, AssumedEach{Phase: ph.ID, Items: cmp.Or(ph.Expect, DefaultEachGuess), Expect: ph.Expect > 0})
		}
		e.Agents, e.Min, e.Max = e.Agents+n, e.Min+lo, e.Max+hi
		e.Phases = append(e.Phases, PhaseEstimate{ID: ph.ID, Agents: n, Min: lo, Note: note})
	}
	return e
}

func phaseEstimate(ph *Phase, inputs map[string]any) (n, lo, hi int, note string) {
	switch ph.Shape() {
	case "parallel":
		n = len(ph.Parallel)
		return n, n, n, ""
	case "each":
		stages := len(ph.Stages)
		if sel, err := ParseSelector(ph.Each); err == nil && sel.Root == "inputs" && inputs != nil {
			if v, err := sel.Eval(map[string]any{"inputs": inputs}); err == nil {
				if list, ok := v.([]any); ok {
					n = len(list) * stages
					return n, len(list), n, ""
				}
			}
		}
		k := ph.Expect
		if k == 0 {
			k = DefaultEachGuess
		}
		n = k * stages
		return n, 0, max(n, p0(ph.Expect)*stages), fmt.Sprintf("%d items × %d stages (items come from outputs; set expect: to say how many)", k, stages)
	case "until_quiet":
		u := ph.UntilQuiet
		per, quiet, rounds := u.perRound(), u.quietRounds(), u.maxRounds()
		return per * rounds, per * min(quiet, rounds), per * rounds, fmt.Sprintf("%d to %d rounds of %d", min(quiet, rounds), rounds, per)
	case "votes":
		n = ph.Votes.Count
		return n, n, n, ""
	}
	return 0, 0, 0, ""
}

func p0(n int) int { return max(n, 0) }

func (u *UntilQuiet) perRound() int {
	if u.PerRound > 0 {
		return u.PerRound
	}
	return 1
}

func (u *UntilQuiet) quietRounds() int {
	if u.QuietRounds > 0 {
		return u.QuietRounds
	}
	return DefaultQuietRounds
}

func (u *UntilQuiet) maxRounds() int {
	if u.MaxRounds > 0 {
		return u.MaxRounds
	}
	return DefaultMaxRounds
}

func (u *UntilQuiet) findingsField() string {
	if u.Findings != "" {
		return u.Findings
	}
	return "findings"
}
