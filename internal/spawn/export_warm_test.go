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
	slot := d.warm.claim(ctx, warmShape(d.envelope("", def, call.Spec{Prompt: "look"}), d.policyBase(), nil))
	if slot == nil {
		return 0
	}
	defer slot.release()
	return slot.w.PID()
}

// PretendStarting gives d a warm set of n children, all of them being
// started, none of which will start until EndStart.
func PretendStarting(d *Dispatcher, n int) {
	d.warm = newWarmSet(d, n)
	d.warm.starting = n
}

// EndStart ends one pretended start, with no child.
func EndStart(d *Dispatcher) {
	d.warm.mu.Lock()
	defer d.warm.mu.Unlock()
	d.warm.starting--
	d.warm.wake()
}

// WarmWaiting is how many dispatches wait for a child being started.
func WarmWaiting(d *Dispatcher) int {
	d.warm.mu.Lock()
	defer d.warm.mu.Unlock()
	return d.warm.waiting
}

// ClaimOtherShape claims a warm child of a shape no warm child has.
func ClaimOtherShape(ctx context.Context, d *Dispatcher) bool {
	return d.warm.claim(ctx, "another shape") != nil
}
