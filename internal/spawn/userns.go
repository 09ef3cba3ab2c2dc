package spawn

import (
	"context"
	"fmt"
	"runtime"
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
// its own start settles it (started). Only when that start fails as the
// kernel refusing the namespace (EPERM, EACCES, EINVAL) does the probe
// run (failed: sandbox.TryUserNS, the same fork and exec of `true` in a
// user namespace that every root's first dispatch made before), and its
// "no" (refused the same way) has the child configured again without the
// namespace and started once more, exactly as the probe's "no" had it
// before; its "yes" leaves the start's error as it was.
//
// A limit reached (ENOSPC, EUSERS: max_user_namespaces, which any process
// of the user can use up, a confined child of another brood process too)
// is no answer: the start fails with the limit's sentence, nothing is
// settled, and a later start or probe can still say yes. So only the
// kernel's "none here" reads as a "no", and the answer lives in this
// process alone. Once settled it is never asked again: a start that fails
// after one in a user namespace succeeded is an error, never a weaker
// start. A child configured on the guess starts, if at all, in its
// namespace, and until it does it runs brood's own start, nothing a model
// asked for.
type nsAnswer struct {
	mu      sync.Mutex
	settled bool
	works   bool
	probes  int // how many times the probe ran (tests)
	// try is the probe (nil: sandbox.TryUserNS).
	try func(context.Context) error
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
// copy's writer, whose copy is made before its start could tell). A probe
// that met a limit settles nothing and answers yes: the child is held as
// one in a user namespace, and its start fails on the limit or settles.
func (a *nsAnswer) settle(ctx context.Context) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.settled {
		_ = a.probeLocked(ctx)
	}
	return a.works || !a.settled
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
// run now if it has not, found none). A limit reached, by the start or
// the probe, is the error to fail the start with (nsLimit), the answer
// left unsettled. A start whose error is neither, or an answer settled
// "yes", leaves the error as it was (false, nil).
func (a *nsAnswer) failed(ctx context.Context, err error) (bool, error) {
	if sandbox.UserNSLimited(err) {
		return false, nsLimit(err)
	}
	if !sandbox.UserNSRefused(err) {
		return false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.settled {
		if perr := a.probeLocked(ctx); perr != nil {
			if sandbox.UserNSLimited(perr) {
				perr = nsLimit(perr)
			}
			return false, fmt.Errorf("%w (the user namespace probe then: %w)", err, perr)
		}
	}
	return !a.works, nil
}

// probeLocked settles the answer by the probe, unless the probe met a
// limit or failed otherwise than by the kernel's refusal, which it
// returns and settles nothing; a.mu is held.
func (a *nsAnswer) probeLocked(ctx context.Context) error {
	a.probes++
	try := a.try
	if try == nil {
		try = sandbox.TryUserNS
	}
	err := try(context.WithoutCancel(ctx))
	if sandbox.UserNSLimited(err) {
		return err
	}
	if err != nil && !sandbox.UserNSRefused(err) && runtime.GOOS == "linux" {
		// Not the kernel's "none here" (a fork short of a process slot or
		// of memory under load, the probe program failing): no answer, as
		// a limit is none. Settled "no", every later worktree writer of
		// this process would run without its held git and read-only
		// mounts (an attack run as a user other than root saw one).
		return err
	}
	a.settled, a.works = true, err == nil
	return nil
}

// nsLimit is err, a start or probe refused for a user namespace limit,
// with what to do about it.
func nsLimit(err error) error { return sandbox.NSLimitError(err) }

// probeCount is how many times the probe ran.
func (a *nsAnswer) probeCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.probes
}
