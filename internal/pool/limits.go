package pool

import (
	"strings"
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

// blameLimit names the limit the child hit, when the watch had no tick
// left to notice it before the leader ended (the kernel's OOM killer chose
// the leader, or the child raced on to its end after a command of its was
// killed): a child that hit a limit ends by it, whatever it says.
func (k *killer) blameLimit() {
	if why := k.hold.breach(); why != "" {
		k.mu.Lock()
		if k.by == "" {
			k.by = why
		}
		k.mu.Unlock()
	}
}

// LimitKill reports whether an Output.KilledBy names a limit the child hit
// ("memory limit of 4 GiB", "process limit of 2048").
func LimitKill(by string) bool { return strings.Contains(by, " limit of ") }
