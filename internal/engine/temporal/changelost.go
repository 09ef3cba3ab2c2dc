package temporal

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/dispatch"
)

// ErrChangeLost: a writer's task finished on this worker, and the worker
// stopped (killed, restarted) after its child ended and before the
// attempt took the change from the child's copy: the change is gone with
// that attempt, and no later attempt here can bring it back (review17 R2).
const ErrChangeLost = "brood.ChangeLost"

// takingDir is where the attempt that runs task id's child for this call
// holds its lock from before the child starts until it has kept the
// child's change (keepChange): a later attempt that finds the task
// finished and no change kept tells by the lock whether that attempt is
// still at it (alive: its process holds the lock) or died (the kernel
// dropped it).
func (a *Activities) takingDir(ctx context.Context, id string) string {
	return strings.TrimSuffix(a.changeRecord(ctx, id), ".json") + ".taking"
}

// holdTaking takes the lock of task id's change for this attempt (a no-op
// unlock when there is nothing to take, or an earlier attempt still holds
// it: this one's child then finds the task busy).
func (a *Activities) holdTaking(ctx context.Context, id string) func() {
	if a.Code == nil || a.Code.Cache == nil || id == "" || dispatch.CheckID(id) != nil {
		return func() {}
	}
	dir := a.takingDir(ctx, id)
	if os.MkdirAll(dir, 0o700) != nil {
		return func() {}
	}
	unlock, err := dispatch.LockTask(dir)
	if err != nil {
		return func() {}
	}
	return func() {
		unlock()
		_ = os.RemoveAll(dir)
	}
}

// notKept is how a later attempt that finds task id finished here and
// its change not kept fails: tried again while the attempt that ran the
// child is alive (it keeps the change, then this call returns it); for
// good when that attempt died before it did, saying so and what to do.
func (a *Activities) notKept(ctx context.Context, id string) error {
	dir := a.takingDir(ctx, id)
	if _, err := os.Stat(dir); err == nil {
		if unlock, err := dispatch.LockTask(dir); err == nil {
			unlock()
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("task %s finished on this worker (%s), but the worker stopped after its child ended and before it took the child's change from its copy: the change is lost, and nothing of it comes back; run the call again, or continue the task with brood tasks resume %s \"PROMPT\" (its writes must be made again)", id, a.Worker, id), ErrChangeLost, nil)
		}
	}
	return temporal.NewApplicationError(fmt.Sprintf("task %s finished on this worker after its attempt was given up, and that attempt, still running here, has not taken its change from its copy yet: the call is tried again", id), ErrTaskBusy)
}
