package pool

import (
	"os"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/limits"
)

// limitPoll is how often a running child's limit counters are read: the
// lag between a breach and the child's end.
const limitPoll = 100 * time.Millisecond

// limitsOf is what a job's child is held to.
func (p *Pool) limitsOf(job Job) limits.Set {
	if job.Limits != (limits.Set{}) {
		return job.Limits
	}
	return p.cfg.Limits
}

// limitTicks paces the limit watch of a child held by a cgroup's counters
// (nil, and nothing to stop, when none holds it).
func (h *hold) limitTicks() (<-chan time.Time, func()) {
	if !h.limited() {
		return nil, func() {}
	}
	t := time.NewTicker(limitPoll)
	return t.C, t.Stop
}

// blameLimit names the limit that killed the child, when its leader died
// of a signal after it hit one (the kernel's OOM killer chose it, or the
// watch had no tick left to notice): "killed by a signal" would not say.
func (k *killer) blameLimit(ps *os.ProcessState) {
	if ps == nil {
		return
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return
	}
	if why := k.hold.breach(); why != "" {
		k.mu.Lock()
		if k.by == "" {
			k.by = why
		}
		k.mu.Unlock()
	}
}
