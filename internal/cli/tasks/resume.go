package tasks

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/cli/worker"
	"github.com/broodhq/brood/internal/dispatch"
)

// ResumeOptions are the arguments of `brood tasks resume`.
type ResumeOptions struct {
	Factory *cmdutil.Factory
	ID      string
	Prompt  string
	JSON    bool
	// Fleet, when configured, resumes a task that is not this project's
	// but a call on the fleet (brood subagent --engine temporal).
	Fleet worker.FleetFlags
}

// NewCmdResume builds `brood tasks resume ID PROMPT`.
func NewCmdResume(f *cmdutil.Factory, runF func(context.Context, *ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{Factory: f}
	cmd := &cobra.Command{
		Use:               "resume ID PROMPT",
		Short:             "Continue a task with a follow-up prompt, its whole transcript intact",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: f.CompleteTaskIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Prompt = args[0], strings.Join(args[1:], " ")
			id, err := f.ResolveTaskID(opts.ID)
			switch {
			case err == nil:
				opts.ID = id
			case !opts.Fleet.Configured(f) || dispatch.CheckID(strings.ToUpper(opts.ID)) != nil:
				return err
			default:
				// Not this project's: a call on the fleet, by its whole id.
				opts.ID = strings.ToUpper(opts.ID)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return resumeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	opts.Fleet.AddFlags(cmd)
	return cmd
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	f := opts.Factory
	t, err := dispatch.LoadTask(f.ProjectRoot, opts.ID)
	if err != nil {
		if opts.Fleet.Configured(f) {
			return fleetResume(ctx, opts)
		}
		return err
	}
	out := render.New(f.Out, f.Err, render.Mode(opts.JSON))
	hk, err := f.OpenHooks(ctx, "", "", "")
	if err != nil {
		return err
	}
	defer hk.Close()
	d, err := f.TaskDispatcher(t, hk.Observe(out.DispatchEvent))
	if err != nil {
		return err
	}
	hk.Attach(d)
	r, err := d.Call(ctx, call.Spec{Resume: opts.ID, Prompt: opts.Prompt})
	if err != nil {
		return err
	}
	// The earlier runs' copies whose work is in the tree (or was nothing)
	// go; one holding unapplied work stays for `brood tasks show`.
	if t, err := dispatch.LoadTask(f.ProjectRoot, opts.ID); err == nil && t.Status != dispatch.StatusRunning {
		_, _, _ = sweepCopies(context.WithoutCancel(ctx), f.ProjectRoot, t, false)
	}
	return render.CallResult(f.Out, r, opts.JSON)
}

// fleetResume continues a fleet call (brood subagent --engine temporal)
// with a follow-up prompt on whichever worker takes it: from its transcript
// in the fleet's store, a stopped writer from its change so far.
func fleetResume(ctx context.Context, opts *ResumeOptions) error {
	f := opts.Factory
	eng, closeFn, err := worker.Engine(ctx, f, opts.Fleet)
	if err != nil {
		return err
	}
	defer closeFn()
	r, err := eng.Call(ctx, call.Spec{Resume: opts.ID, Prompt: opts.Prompt})
	if err != nil {
		return err
	}
	return render.CallResult(f.Out, r, opts.JSON)
}
