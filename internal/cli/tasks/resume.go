package tasks

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/dispatch"
)

// ResumeOptions are the arguments of `brood tasks resume`.
type ResumeOptions struct {
	Factory *cmdutil.Factory
	ID      string
	Prompt  string
	JSON    bool
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
			if err != nil {
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return resumeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	f := opts.Factory
	t, err := dispatch.LoadTask(f.ProjectRoot, opts.ID)
	if err != nil {
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
