package temporal

import (
	"regexp"
	"strings"

	"github.com/broodhq/brood/internal/call"
	wf "github.com/broodhq/brood/internal/workflow"
)

// A child's permission refusal names the rule to add and how: in the
// user's settings (or, for a program of the repository's, the project's
// local file), or with --allow; or, where no rule is worth keeping, to
// approve the call when asked or --allow the exact line for one run
// (internal/tool/advice.go). On the fleet every one of these is the
// worker's (the submitter's --allow is refused with --engine temporal,
// and the worker asks no one), so the submitter reads where to change
// them instead.
const (
	refusalAsk   = "and no one is here to give it; to allow it add "
	refusalFleet = "and no one is here to give it; the worker's settings decide on the fleet (--allow is not the submitter's): to allow it, where brood worker runs add "
	refusalNone  = "and no one is here to give it; no rule to keep is suggested ("
)

// flagShape is one --allow flag's quoted rule (a single quote inside it
// closes, escapes and reopens the quoting, as a shell reads it).
const flagShape = `'(?:[^']|'\\'')*'`

// refusalHow is the end of the refusal: the settings file and the flags;
// localHow the same for a program of the repository's; noneHow the end of
// an advice that keeps no rule.
var (
	refusalHow = regexp.MustCompile(`in (?:~/\.config/brood/settings\.toml|\.brood/settings\.toml), or pass --allow ` + flagShape + `(?: --allow ` + flagShape + `)*`)
	localHow   = regexp.MustCompile(`in \.brood/settings\.local\.toml \(this project only: edited by hand, it needs brood trust\), or pass --allow ` + flagShape + `(?: --allow ` + flagShape + `)*`)
	noneHow    = regexp.MustCompile(`: approve the call when asked \(run brood without -p\)(?:, or pass --allow ` + flagShape + ` for one run)?`)
)

// workerHow is where the worker's rule goes: its user's settings, or its
// project's, which a worker applies only once that project is trusted
// there (docs/trust.md: an untrusted project's allow rules are not).
const workerHow = "in its user's ~/.config/brood/settings.toml, or in its project's .brood/settings.toml once that project is trusted there (brood trust, or brood worker --trust-project: an untrusted project's allow rules are not applied), then restart the worker"

// workerLocalHow is where the worker's rule for a program of the
// repository's goes: its project's file only, never its user's (every
// project's).
const workerLocalHow = "in its project's .brood/settings.toml once that project is trusted there (brood trust, or brood worker --trust-project: an untrusted project's allow rules are not applied), then restart the worker"

// workerNone is what the submitter can do about a call no rule is worth
// keeping for: the worker asks no one.
const workerNone = ": run the call where you are asked (brood without --engine temporal): the fleet's worker asks no one, and --allow is not the submitter's"

// workerAdvice is s with a permission refusal's advice made the
// worker's: the rule goes in the worker's settings (its user's, or its
// trusted project's), and the worker is restarted to read them; a call no
// rule is worth keeping for is run where someone is asked. The rest of s
// is kept as it is (it may be cut).
func workerAdvice(s string) string {
	if strings.Contains(s, refusalNone) {
		s = noneHow.ReplaceAllString(s, workerNone)
	}
	if !strings.Contains(s, refusalAsk) {
		return s
	}
	s = strings.ReplaceAll(s, refusalAsk, refusalFleet)
	s = localHow.ReplaceAllString(s, workerLocalHow)
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
