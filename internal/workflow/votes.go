package workflow

import (
	"context"
	"fmt"
)

// Tally is the outcome of a votes phase: its output.
type Tally struct {
	Accepted bool           `json:"accepted"`
	Value    any            `json:"value"`
	Yes      int            `json:"yes"`
	Count    int            `json:"count"`
	Rule     string         `json:"rule"`
	Counts   map[string]int `json:"tally"`
}

// votes runs the same call Count times and accepts a value of Field by the
// rule. A vote that yields null (or lacks the field) counts as no.
func (x *executor) votes(ctx context.Context, ph *Phase) PhaseResult {
	v := ph.Votes
	pr := PhaseResult{ID: ph.ID, Shape: "votes", Calls: make([]CallRecord, v.Count)}
	x.queue(ph, v.Count)
	base := x.scope()
	wg := x.rt.NewGroup(ctx)
	for i := range pr.Calls {
		wg.Add(1)
		x.rt.Go(ctx, func(ctx context.Context) {
			defer wg.Done()
			scope := with2(base)
			scope["vote"] = Own(i + 1)
			pr.Calls[i] = x.call(ctx, ph, voteKey(ph.ID, i+1), &v.Call, scope)
		})
	}
	wg.Wait(ctx)
	var values []any
	for _, c := range pr.Calls {
		m, _ := c.Output.(map[string]any)
		values = append(values, m[v.Field])
	}
	t := TallyVotes(values, v.Accept)
	pr.Output = tallyMap(t)
	pr.Status = PhaseDone
	if !t.Accepted {
		pr.Status, pr.Reason = PhaseFailed, fmt.Sprintf("the vote was not accepted (%s: %d of %d for the leading answer)", t.Rule, t.Yes, t.Count)
	}
	if ctx.Err() != nil {
		pr.Status = PhasePartial
	}
	return pr
}

// TallyVotes counts votes (nil is no vote) and applies the rule.
func TallyVotes(values []any, a Accept) Tally {
	t := Tally{Count: len(values), Counts: map[string]int{}, Rule: a.Rule}
	if a.Rule == "at_least" {
		t.Rule = fmt.Sprintf("at_least %d", a.AtLeast)
	}
	var best string
	first := map[string]any{}
	var order []string
	for _, v := range values {
		if v == nil {
			continue
		}
		k := canonical(v)
		if _, ok := first[k]; !ok {
			first[k] = v
			order = append(order, k)
		}
		t.Counts[k]++
	}
	tie := false
	for _, k := range order {
		switch {
		case best == "" || t.Counts[k] > t.Counts[best]:
			best, tie = k, false
		case t.Counts[k] == t.Counts[best]:
			tie = true
		}
	}
	if best == "" {
		return t
	}
	t.Yes, t.Value = t.Counts[best], first[best]
	switch a.Rule {
	case "unanimous":
		t.Accepted = t.Yes == t.Count
	case "at_least":
		t.Accepted = t.Yes >= a.AtLeast && !tie
	default:
		t.Accepted = 2*t.Yes > t.Count
	}
	if !t.Accepted {
		t.Value = nil
	}
	return t
}

// tallyMap is a tally as a plan's templates see it.
func tallyMap(t Tally) map[string]any {
	counts := map[string]any{}
	for k, n := range t.Counts {
		counts[k] = float64(n)
	}
	return map[string]any{"accepted": t.Accepted, "value": t.Value, "yes": float64(t.Yes), "count": float64(t.Count), "rule": t.Rule, "tally": counts}
}
