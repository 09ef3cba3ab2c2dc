package tasks

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/root"
)

// ResumeOptions are the arguments of `brood tasks resume`.
type ResumeOptions struct {
	Factory *cmdutil.Factory
	ID      string
	Prompt  string
	JSON    bool
	// Fleet, when configured, resumes a task that is not this project's
	// but a call on the fleet (brood subagent --engine temporal).
	Fleet root.FleetFlags
}

// NewCmdResume builds `brood tasks resume ID [PROMPT]`.
func NewCmdResume(f *cmdutil.Factory, runF func(context.Context, *ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "resume ID [PROMPT]",
		Short: "Continue a task with a follow-up prompt, its whole transcript intact",
		Long: `Continue a task with a follow-up prompt, its whole transcript intact.

A fleet call (brood subagent --engine temporal) whose submitter died before
it brought the call's change back has that change landed in this tree
first, once, whoever resumes it; without a PROMPT, resume only lands it.`,
		Example: `  brood tasks resume 01J... "now add a test for it"
  brood tasks resume 01J...        # a fleet call: land its change only`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: f.CompleteTaskIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Prompt = args[0], strings.Join(args[1:], " ")
			id, err := f.ResolveTaskID(opts.ID)
			switch {
			case err == nil:
				opts.ID = id
			case !opts.Fleet.Configured(f) || len(strings.TrimSpace(opts.ID)) < 4 || strings.Contains(err.Error(), " is ambiguous "):
				return err
			default:
				// Not this project's: a call on the fleet, by its id or a
				// unique prefix or tail of one (the engine resolves it).
				opts.ID = strings.ToUpper(strings.TrimSpace(opts.ID))
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
	if strings.TrimSpace(opts.Prompt) == "" {
		return cmdutil.UsageError("task %s is this project's: give the follow-up, brood tasks resume %s PROMPT (without one, resume lands a fleet call's change only)", opts.ID, opts.ID)
	}
	out := render.New(f.Out, render.RedactWriter(f.Err, f.Redactor.Redact), render.Mode(opts.JSON))
	rt, err := root.New(ctx, f, root.Options{Source: "cli", Task: t, OnEvent: out.DispatchEvent})
	if err != nil {
		return err
	}
	defer rt.Close()
	d, err := rt.MustDispatch("resume a task")
	if err != nil {
		return err
	}
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

// fleetResume continues or lands a fleet call (brood subagent --engine
// temporal) through the fleet brood-fleet links.
func fleetResume(ctx context.Context, opts *ResumeOptions) error {
	f := opts.Factory
	link, err := f.FleetLink()
	if err != nil {
		return err
	}
	return link.ResumeCall(ctx, f, opts.Fleet, opts.ID, opts.Prompt, opts.JSON)
}
