package workflow

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/engine"
	wf "github.com/broodhq/brood/internal/workflow"
)

// ResumeOptions are the flags of `brood workflow resume`.
type ResumeOptions struct {
	F     *Deps
	RunID string
	JSON  bool
}

func newCmdResume(f *Deps) *cobra.Command {
	opts := &ResumeOptions{F: f}
	cmd := &cobra.Command{
		Use:     "resume RUN_ID",
		Example: `  brood workflow resume 8XRTAB`,
		Short:   "Continue an interrupted or cancelled run; finished calls are never run again",
		Long: `Continue an interrupted or cancelled run from its journal: finished calls are
never run again, and a stopped call continues its task from its transcript.

A fleet run (--temporal HOST:PORT or temporal.address) resumes on the
fleet: a cancelled one starts its next execution there (any worker of the
queue continues its stopped calls); one still running is attached to and
waited for; one that had finished runs nothing, says so, and lands in this
tree what its submitter never landed (resume it from the checkout it was
submitted from: its change lands there).`,
		Args: cobra.ExactArgs(1),

		ValidArgsFunction: f.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return resumeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON on stdout")
	return cmd
}

func resumeRun(ctx context.Context, o *ResumeOptions) error {
	ctx, stop, err := o.F.observe(ctx)
	if err != nil {
		return err
	}
	defer stop()
	eng, id, closeFn, err := o.F.engineFor(ctx, o.RunID, false)
	if err != nil {
		return err
	}
	o.RunID = id
	if eng.Name() != "temporal" {
		// A finished local run only shows its result: it needs no model.
		if info, serr := eng.Show(ctx, id); serr != nil || info.Status != wf.RunDone {
			closeFn()
			if eng, closeFn, err = o.F.engineForWhole(ctx, id, true); err != nil {
				return err
			}
		}
	}
	defer closeFn()
	// The line is said when the run does resume (its first event, or its
	// result): a run refused (not the user's, its plan swapped, not found)
	// is never said to be resumed first.
	line, once := resumeLine(ctx, eng, o.RunID), sync.Once{}
	say := func() { once.Do(func() { fmt.Fprintln(o.F.Err, line) }) }
	progress := newProgress(o.F.Err).event
	res, err := eng.Resume(ctx, o.RunID, func(ev wf.Event) { say(); progress(ev) })
	if err != nil {
		return notFound(err, o.RunID)
	}
	say()
	return finish(o.F, ctx, eng, res, o.JSON)
}

// resumeLine says what resume does with the run: continues it, follows it
// (still running), or only shows (and lands) the result of a run that had
// finished.
func resumeLine(ctx context.Context, eng engine.Engine, id string) string {
	info, err := eng.Show(ctx, id)
	if err != nil {
		return "workflow run " + id + " resumed"
	}
	switch info.Status {
	case wf.RunDone:
		return "workflow run " + id + " had already finished (done): nothing to resume; its result follows"
	case wf.RunRunning:
		if eng.Name() == "temporal" {
			return "workflow run " + id + " is still running on the fleet: following it"
		}
		return "workflow run " + id + " resumed"
	}
	if eng.Name() == "temporal" && strings.HasPrefix(info.Status, "queued") {
		return "workflow run " + id + " is still on the fleet, " + info.Status + ": following it"
	}
	return "workflow run " + id + " resumed (it was " + info.Status + ")"
}
