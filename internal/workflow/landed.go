package workflow

import (
	"fmt"
	"strconv"
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
	return r.notApplied(func(c *CallRecord) string {
		if c.Landed == "" {
			return ""
		}
		return "its change is in the run's tree, which was not applied to your tree: " + why
	})
}

// NotInTree marks the calls whose changes are not in the tree a fleet run
// came back with (why, by task id: brood's reason) the way NotLanded
// does: not-applied, their outputs withdrawn, the phases and the run
// judged again; their landed says so too, and their error that their
// patches are kept with their tasks (keepPatches writes them out). It returns how many it marked.
func (r *Result) NotInTree(why map[string]string) int {
	return r.notApplied(func(c *CallRecord) string {
		msg := why[c.TaskID]
		if msg == "" {
			return ""
		}
		c.Landed = "not in the tree the run came back with: not landed"
		return "its change is not in the tree the run came back with: " + msg + "; " + KeptWithTask(c.TaskID)
	})
}

// notApplied marks every call (not not-applied already) for which why
// gives a reason: not-applied with that error, its output withdrawn.
func (r *Result) notApplied(why func(c *CallRecord) string) int {
	n := 0
	for i := range r.Phases {
		ph := &r.Phases[i]
		var lost []string
		for k := range ph.Calls {
			c := &ph.Calls[k]
			if c.Status == CallNotApplied {
				continue
			}
			msg := why(c)
			if msg == "" {
				continue
			}
			c.Status, c.Output = CallNotApplied, nil
			c.Error = msg
			if c.TaskID != "" && !strings.Contains(msg, "(brood tasks show ") {
				c.Error += " (brood tasks show " + c.TaskID + ")"
			}
			lost = append(lost, c.Key)
		}
		if len(lost) == 0 {
			continue
		}
		n += len(lost)
		r.lose(ph, lost, fmt.Sprintf("the change of %s was not applied to your tree", strings.Join(lost, ", ")))
	}
	if n > 0 {
		r.judge()
	}
	return n
}

// lose withdraws the outputs of a phase's lost calls (keys), adds why to
// its reason and judges the phase again: failed when no call's output is
// left, else partial where it was done.
func (r *Result) lose(ph *PhaseResult, lost []string, why string) {
	r.withdraw(ph, lost)
	ph.Reason = joinNonEmpty(ph.Reason, why)
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

// withdraw takes the outputs of a phase's lost calls (keys) out of the
// phase's output and the run's outputs, as the local executor never puts
// a not-applied call's there: a parallel phase's entry (and its named
// task's), an each phase's item (its chain broke at that stage). The
// aggregates of until_quiet and votes are kept: no item of them is one
// call's.
func (r *Result) withdraw(ph *PhaseResult, lost []string) {
	list, _ := ph.Output.([]any)
	for _, key := range lost {
		rest, ok := strings.CutPrefix(key, ph.ID+"/")
		if !ok {
			continue
		}
		switch ph.Shape {
		case "parallel":
			for j, c := range ph.Calls {
				if c.Key == key && j < len(list) {
					list[j] = nil
				}
			}
			if _, named := r.Outputs[rest]; named && rest != ph.ID {
				if _, err := strconv.Atoi(rest); err != nil {
					r.Outputs[rest] = nil
				}
			}
		case "each":
			item, _, _ := strings.Cut(rest, "/")
			if i, err := strconv.Atoi(item); err == nil && i >= 0 && i < len(list) {
				list[i] = nil
			}
		}
	}
	if _, ok := r.Outputs[ph.ID]; ok && list != nil {
		r.Outputs[ph.ID] = list
	}
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

// Refused marks the calls whose results the submitter did not take (by
// key, why: a result no worker it trusts signed, or a record that does
// not agree with the signed result): failed with brood's reason, their
// output withdrawn, the phases and the run judged again as NotLanded
// does. It returns how many calls it marked.
func (r *Result) Refused(why map[string]string) int {
	n := 0
	for i := range r.Phases {
		ph := &r.Phases[i]
		var lost []string
		for k := range ph.Calls {
			c := &ph.Calls[k]
			msg, ok := why[c.Key]
			if !ok {
				continue
			}
			c.Status, c.Output, c.Error = "failed", nil, msg
			lost = append(lost, c.Key)
		}
		if len(lost) == 0 {
			continue
		}
		n += len(lost)
		r.lose(ph, lost, fmt.Sprintf("the result of %s was not taken", strings.Join(lost, ", ")))
	}
	if n > 0 {
		r.judge()
	}
	return n
}
