package workflow

import (
	"fmt"
	"strings"
)

// NotLanded marks a fleet run whose tree did not land in the submitter's
// work tree (it conflicts with an edit made there meanwhile, or git
// failed): every call whose change is in that tree (Landed set, not
// already not-applied) becomes not-applied with its output withdrawn, as
// a local writer's change that does not apply; the phases and the run
// are judged again the way the executor judges them, so the status and
// the exit code say that the work is not in the tree. why is what the
// landing said; it returns how many calls it marked.
func (r *Result) NotLanded(why string) int {
	n := 0
	for i := range r.Phases {
		ph := &r.Phases[i]
		var lost []string
		for k := range ph.Calls {
			c := &ph.Calls[k]
			if c.Landed == "" || c.Status == CallNotApplied {
				continue
			}
			c.Status, c.Output = CallNotApplied, nil
			c.Error = "its change is in the run's tree, which was not applied to your tree: " + why
			if c.TaskID != "" {
				c.Error += " (brood tasks show " + c.TaskID + ")"
			}
			lost = append(lost, c.Key)
		}
		if len(lost) == 0 {
			continue
		}
		n += len(lost)
		ph.Reason = joinNonEmpty(ph.Reason, fmt.Sprintf("the change of %s was not applied to your tree", strings.Join(lost, ", ")))
		ok := 0
		for _, c := range ph.Calls {
			if c.Output != nil {
				ok++
			}
		}
		switch {
		case ok == 0:
			ph.Status = PhaseFailed
		case ph.Status == PhaseDone:
			ph.Status = PhasePartial
		}
	}
	if n > 0 {
		r.judge()
	}
	return n
}

// judge sets the run's status from its phases as the executor does
// (failed when every phase failed or was skipped, partial when any did or
// was partial), keeping the reason's remarks that are not about a phase.
func (r *Result) judge() {
	failed := 0
	var why []string
	judged := map[string]bool{}
	for _, ph := range r.Phases {
		for _, st := range []string{PhaseFailed, PhaseSkipped, PhasePartial} {
			judged["phase "+ph.ID+" "+st] = true
		}
		switch ph.Status {
		case PhaseFailed, PhaseSkipped:
			failed++
			why = append(why, fmt.Sprintf("phase %s %s", ph.ID, ph.Status))
		case PhasePartial:
			why = append(why, fmt.Sprintf("phase %s partial", ph.ID))
		}
	}
	for _, part := range strings.Split(r.Reason, "; ") {
		if part != "" && !judged[part] {
			why = append(why, part)
		}
	}
	r.Reason = strings.Join(why, "; ")
	switch {
	case len(r.Phases) > 0 && failed == len(r.Phases):
		r.Status = RunFailed
	case len(why) > 0 && r.Status == RunDone:
		r.Status = RunPartial
	}
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
