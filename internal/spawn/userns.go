package spawn

import (
	"context"
	"sync"

	"github.com/broodhq/brood/internal/sandbox"
)

// nsAnswer is what a root dispatcher knows of whether this machine starts
// a child in a user namespace, which decides how a child of the root is
// held: its read-only view, an in-place writer's view, a worktree
// writer's held git directory (without one: notes, the configuration
// guard alone, sandbox.require's refusal).
//
// No spawn pays a probe for it where the namespaces work: until the
// answer is settled, a child is configured as if they did (guess), and
// its own start settles it (started). Only when that start fails as a
// refused namespace does the probe run (failed: sandbox.ProbeUserNS,
// once, the same fork and exec of `true` in a user namespace that every
// root's first dispatch made before), and its "no" has the child
// configured again without the namespace and started once more, exactly
// as the probe's "no" had it before; its "yes" leaves the start's error
// as it was.
//
// The answer lives in this process alone, so nothing a child or a
// repository writes reads as a "no". Once settled it is never asked
// again: a start that fails after one in a user namespace succeeded (a
// child that used up the namespace limit, say) is an error, never a
// weaker start. A child configured on the guess starts, if at all, in
// its namespace, and until it does it runs brood's own start, nothing a
// model asked for.
type nsAnswer struct {
	mu      sync.Mutex
	settled bool
	works   bool
	probes  int // how many times the probe ran (tests)
}

// guess is the answer a child is configured by without waiting: the
// settled one, else yes; guessed says it was not settled.
func (a *nsAnswer) guess() (works, guessed bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.settled {
		return a.works, false
	}
	return true, true
}

// settle is the answer, probed now when none is settled (a worktree
// copy's writer, whose copy is made before its start could tell).
func (a *nsAnswer) settle(ctx context.Context) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.settled {
		a.probeLocked(ctx)
	}
	return a.works
}

// started records that a child started in a user namespace: the answer
// is yes from now on, whatever later starts meet.
func (a *nsAnswer) started() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.settled {
		a.settled, a.works = true, true
	}
}

// failed is asked when the start of a child configured on a guess (guess)
// failed with err: true when it is to be configured again and started
// without a user namespace, because the answer is settled "no" (the probe,
// run now if it has not, found none). A start whose error is no refused
// namespace, or an answer settled "yes", leaves the error as it was.
func (a *nsAnswer) failed(ctx context.Context, err error) bool {
	if !sandbox.UserNSRefused(err) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.settled {
		a.probeLocked(ctx)
	}
	return !a.works
}

// probeLocked settles the answer by the probe; a.mu is held.
func (a *nsAnswer) probeLocked(ctx context.Context) {
	a.probes++
	a.settled, a.works = true, sandbox.ProbeUserNS(context.WithoutCancel(ctx)).UserNS
}

// probeCount is how many times the probe ran.
func (a *nsAnswer) probeCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.probes
}
