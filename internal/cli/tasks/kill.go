package tasks

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
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
		Use:               "kill ID",
		Short:             "Stop a running task (SIGTERM, then SIGKILL); it stays resumable",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.CompleteTaskIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			id, err := f.ResolveTaskID(opts.ID)
			if err != nil {
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return killRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func killRun(ctx context.Context, opts *KillOptions) error {
	f := opts.Factory
	id, pid, err := Kill(ctx, f, opts.ID)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, map[string]any{"task_id": id, "killed": true, "pid": pid})
	}
	fmt.Fprintf(f.Out, "stopped task %s (pid %d); resume it with: brood tasks resume %s \"...\"\n", id, pid, id)
	return nil
}

// Kill stops a running task in stages (SIGTERM to its process group, the
// grace period, then SIGKILL) and returns its id and the pid it stopped.
// The interactive mode's kill from the tree is this too.
func Kill(ctx context.Context, f *cmdutil.Factory, id string) (string, int, error) {
	t, err := dispatch.LoadTask(f.ProjectRoot, id)
	if err != nil {
		return "", 0, err
	}
	if t.Status != dispatch.StatusRunning || t.Log == nil {
		return "", 0, fmt.Errorf("task %s is not running (status %s)", t.ID, t.Status)
	}
	pid := t.Log.PID
	if pid <= 1 {
		return "", 0, fmt.Errorf("task %s has no process of its own to stop (pid %d)", t.ID, pid)
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	grace := f.Settings.Pool.KillGrace.Duration
	if !waitGone(ctx, pid, t.ID, grace) {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		waitGone(ctx, pid, t.ID, grace)
	}
	// The process is gone; its parent (another brood) records how it
	// ended. Wait a grace period for that record, so that what `brood
	// tasks` shows next is the outcome and not "running (finishing)".
	waitRecorded(ctx, f.ProjectRoot, t.ID, grace)
	return t.ID, pid, nil
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

// waitGone polls until the task's process is gone, up to d.
func waitGone(ctx context.Context, pid int, id string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if !dispatch.Alive(pid, id) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return !dispatch.Alive(pid, id)
}
