package spawn

import (
	"context"

	"github.com/broodhq/brood/internal/call"
)

// ClaimWarm claims a warm child of an explore dispatch's shape as
// takeWarm does, and returns its pid (0: none); the child is then ended.
func ClaimWarm(ctx context.Context, d *Dispatcher) int {
	def, ok := d.cfg.Registry.Get(warmAgent)
	if !ok {
		return 0
	}
	slot := d.warm.claim(ctx, warmShape(d.envelope("", def, call.Spec{Prompt: "look"}), d.policyBase()))
	if slot == nil {
		return 0
	}
	defer slot.release()
	return slot.w.PID()
}
