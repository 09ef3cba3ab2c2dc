package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/pool"
)

// KillOptions are the arguments of `brood tasks kill`.
type KillOptions struct {
	Factory *cmdutil.Factory
	ID      string
	JSON    bool
}

// NewCmdKill builds `brood tasks kill ID`.
func NewCmdKill(f *cmdutil.Factory, runF func(context.Context, *KillOptions) error) *cobra.Command {
	opts := &KillOptions{Factory: f}
	cmd := &cobra.Command{
		Use: "kill ID",
		Example: `  brood tasks kill 8XRTAB
  brood tasks kill 01KBN5Q7MZ8X --json`,
		Short: "Stop a running task (SIGTERM, then SIGKILL); it stays resumable",
		Long: `Stop a running task (SIGTERM, then SIGKILL); it stays resumable.

The process stopped is proven the task's from the kernel's tables: its
parent holds the task's lock, and it is in the cgroup, or is the PID
namespace's init, its parent's pool made for it. A nested task (a
subagent's subagent) whose confined parent could give it neither cannot
be told from a process its parent's tools started: it is not signalled.
Stop its parent's task instead (brood tasks kill PARENT-ID: the parent's
children end with it), or ask the parent. A kill that finds nothing to
stop records nothing: the task is still listed as running.`,
		Args: cobra.ExactArgs(1),
	}
	taskVerb(f, cmd, func(ctx context.Context, id string, _ []string) error {
		opts.ID = id
		if runF != nil {
			return runF(ctx, opts)
		}
		return killRun(ctx, opts)
	})
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func killRun(ctx context.Context, opts *KillOptions) error {
	f := opts.Factory
	k, err := killTask(ctx, f, opts.ID)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, map[string]any{"task_id": opts.ID, "killed": true, "pid": k.PIDs[0], "owner_pid": k.Owner[0], "cgroup": k.Cgroup, "signals": k.How})
	}
	fmt.Fprintf(f.Out, "stopped task %s (pid %d); resume it with: brood tasks resume %s \"...\"\n", opts.ID, k.PIDs[0], opts.ID)
	return nil
}

// Kill stops a running task in stages (SIGTERM, the grace period, then
// SIGKILL of everything it started) and returns its id and the pid it
// stopped. The interactive mode's kill from the tree is this too.
func Kill(ctx context.Context, f *cmdutil.Factory, id string) (string, int, error) {
	k, err := killTask(ctx, f, id)
	if err != nil {
		return "", 0, err
	}
	return id, k.PIDs[0], nil
}

func killTask(ctx context.Context, f *cmdutil.Factory, id string) (pool.Killed, error) {
	t, err := dispatch.LoadTask(f.ProjectRoot, id)
	if err != nil {
		return pool.Killed{}, err
	}
	if t.Status == dispatch.StatusQueued {
		// Queued a moment ago (the interactive mode lists a background
		// task at once): its child is being started; stop it once it is.
		t = waitStarted(ctx, f.ProjectRoot, t, startWait)
	}
	if t.Status != dispatch.StatusRunning {
		return pool.Killed{}, fmt.Errorf("task %s is not running (status %s)", t.ID, t.Status)
	}
	// Never a pid from the task's records (the child writes them, and pid 1
	// would mean kill(-1)): the pool proves which process is the task's
	// child from the kernel's tables (see pool.KillTask).
	grace := f.Settings.Pool.KillGrace.Duration
	// Queued again while the kill looks for its child (its run ended and
	// it waits for a slot to run anew): said at once, not after the look
	// gives up. (A task queued when the kill starts was waited for above.) The
	// records only stop the look; they never choose what is signalled.
	queued := func() bool {
		n, err := dispatch.LoadTask(f.ProjectRoot, t.ID)
		return err == nil && n.Status == dispatch.StatusQueued
	}
	// Recorded once its child is found and before any signal, in the
	// project's records (out of the child's reach): its owner and every
	// listing then say a person stopped it, never "cancelled" or "running";
	// a kill that finds no child to stop records nothing, so the listing
	// never says killed of a task that runs on.
	record := func() error {
		if err := dispatch.RecordKill(f.ProjectRoot, t.ID, "brood tasks kill"); err != nil {
			return fmt.Errorf("cannot record the kill of task %s (nothing was signalled): %w", t.ID, err)
		}
		return nil
	}
	k, err := pool.KillTask(ctx, t.ID, t.Dir, grace, queued, record)
	if errors.Is(err, pool.ErrNoOwner) {
		return k, fmt.Errorf("task %s is not running: %w", t.ID, err)
	}
	if errors.Is(err, pool.ErrQueued) {
		return k, fmt.Errorf("task %s is queued: no process of it runs yet; kill it again once it runs (brood tasks shows it running)", t.ID)
	}
	if err != nil {
		return k, err
	}
	// The process is gone; its parent (another brood) records how it
	// ended. Wait a grace period for that record, so that what `brood
	// tasks` shows next is the outcome and not "running (finishing)".
	waitRecorded(ctx, f.ProjectRoot, t.ID, grace)
	return k, nil
}

// startWait is how long a kill waits for a queued task's child to start.
const startWait = 10 * time.Second

// waitStarted polls until task t is no longer queued, up to d, and returns
// it as last read.
func waitStarted(ctx context.Context, root string, t *dispatch.Task, d time.Duration) *dispatch.Task {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for t.Status == dispatch.StatusQueued && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return t
		case <-tick.C:
		}
		if n, err := dispatch.LoadTask(root, t.ID); err == nil {
			t = n
		}
	}
	return t
}

// waitRecorded polls until the task's listing no longer says running, up
// to d.
func waitRecorded(ctx context.Context, root, id string, d time.Duration) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if t, err := dispatch.LoadTask(root, id); err != nil || t.Status != dispatch.StatusRunning {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
