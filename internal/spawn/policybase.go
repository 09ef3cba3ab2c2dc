package spawn

import "github.com/broodhq/brood/internal/isolate"

// policyBase is the dispatcher's shared policy parts (isolate.PolicyBase:
// found once), with Config.Hidden among the paths no child reads.
func (d *Dispatcher) policyBase() *isolate.PolicyBase {
	d.baseOnce.Do(func() { d.base = isolate.NewPolicyBase(d.cfg.Hidden) })
	return d.base
}
