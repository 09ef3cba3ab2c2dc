package spawn

import (
	"slices"

	"github.com/broodhq/brood/internal/isolate"
)

// policyBase is the dispatcher's shared policy parts (isolate.PolicyBase:
// found once), with Config.Hidden and the user's sandbox.hide among the
// paths no child reads.
func (d *Dispatcher) policyBase() *isolate.PolicyBase {
	d.baseOnce.Do(func() {
		d.base = isolate.NewPolicyBaseEnv(append(slices.Clone(d.cfg.Hidden), d.cfg.Settings.Sandbox.Hide...), d.cfg.Env)
	})
	return d.base
}
