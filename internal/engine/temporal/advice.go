package temporal

import (
	"regexp"
	"strings"

	"github.com/broodhq/brood/internal/call"
	wf "github.com/broodhq/brood/internal/workflow"
)

// A child's permission refusal names the rule to add and how: in
// .brood/settings.toml, or with --allow. On the fleet both are the
// worker's (the submitter's --allow is refused with --engine temporal), so
// the submitter reads where to change them instead.
const (
	refusalAsk   = "and no one is here to give it; to allow it add "
	refusalFleet = "and no one is here to give it; the worker's settings decide on the fleet (--allow is not the submitter's): to allow it, where brood worker runs add "
)

// refusalHow is the end of the refusal: the settings file and the flags.
var refusalHow = regexp.MustCompile(`in (?:~/\.config/brood/settings\.toml|\.brood/settings\.toml), or pass --allow '[^']*'(?: --allow '[^']*')*`)

// workerHow is where the worker's rule goes: its user's settings, or its
// project's, which a worker applies only once that project is trusted
// there (docs/trust.md: an untrusted project's allow rules are not).
const workerHow = "in its user's ~/.config/brood/settings.toml, or in its project's .brood/settings.toml once that project is trusted there (brood trust, or brood worker --trust-project: an untrusted project's allow rules are not applied), then restart the worker"

// workerAdvice is s with a permission refusal's advice made the
// worker's: the rule goes in the worker's settings (its user's, or its
// trusted project's), and the worker is restarted to read them. The rest
// of s is kept as it is (it may be cut).
func workerAdvice(s string) string {
	if !strings.Contains(s, refusalAsk) {
		return s
	}
	s = strings.ReplaceAll(s, refusalAsk, refusalFleet)
	return refusalHow.ReplaceAllString(s, workerHow)
}

// fleetAdvice makes a fleet call's result say the worker's advice.
func fleetAdvice(r *call.Result) {
	r.Error, r.Text = workerAdvice(r.Error), workerAdvice(r.Text)
	for i, f := range r.Failures {
		r.Failures[i] = workerAdvice(f)
	}
}

// runAdvice makes a fleet run's calls say the worker's advice.
func runAdvice(res *wf.Result) {
	for i := range res.Phases {
		for k := range res.Phases[i].Calls {
			c := &res.Phases[i].Calls[k]
			c.Error = workerAdvice(c.Error)
			for j, f := range c.Failures {
				c.Failures[j] = workerAdvice(f)
			}
		}
	}
}

// taskAdvice makes a fleet task's detail (brood tasks show) say the
// worker's advice: its result, why its last attempt failed, and its
// refusal, as the submitter's own Call and Run already do.
func taskAdvice(d *FleetTaskDetail) *FleetTaskDetail {
	if d == nil {
		return nil
	}
	d.LastFailure = workerAdvice(d.LastFailure)
	if d.Result != nil {
		fleetAdvice(d.Result)
		d.Result.Summary = workerAdvice(d.Result.Summary)
	}
	return d
}
