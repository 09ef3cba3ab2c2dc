package pool

import (
	"context"
	"errors"
	"os/exec"
)

// Confiner confines one child process: every process the pool starts on a
// child's behalf goes through one, and the pool refuses a job without it
// (ErrUnconfined), so no class of child can be started without its
// confinement by leaving a callback out. Package sandbox holds the kernel
// side (Landlock, seccomp, capabilities, namespaces) and package isolate
// the copies and views; the caller's Confiner puts them together for the
// child's class.
type Confiner interface {
	// Prepare runs once the job holds its scheduler slot, just before the
	// start (copies, views, namespaces on cmd, snapshots of the tree the
	// child may change). An error stops the job.
	Prepare(ctx context.Context, cmd *exec.Cmd) error
	// Confine runs on a dedicated OS thread right before the process is
	// started from that same thread, which is then discarded: a
	// per-thread restriction it applies (Landlock, the bounding set, a
	// syscall filter) reaches the child from its first instruction and
	// nothing else.
	Confine(cmd *exec.Cmd) error
}

// Retrier is a Confiner that may start its child a second way when the
// first start failed: a start in a user namespace configured before this
// process knew whether the kernel gives one (internal/spawn's nsAnswer).
type Retrier interface {
	Confiner
	// Retry is asked once when the start of cmd failed with err, while
	// the job still holds its slot: a fresh command to start instead,
	// prepared as Prepare would have prepared it (its Confine runs on
	// it), or nil to fail with err; an error fails the job with it.
	Retry(ctx context.Context, cmd *exec.Cmd, err error) (*exec.Cmd, error)
}

// ErrUnconfined is Run's and Prestart's answer to a job with no Confiner.
var ErrUnconfined = errors.New("pool: a child is never started without its confinement (no Confiner)")

// Unconfined is the Confiner of a process that is no child of an agent
// (a probe, a test's helper): it prepares and confines nothing, and says so
// where it is used.
type Unconfined struct{}

// Prepare does nothing.
func (Unconfined) Prepare(context.Context, *exec.Cmd) error { return nil }

// Confine does nothing.
func (Unconfined) Confine(*exec.Cmd) error { return nil }
