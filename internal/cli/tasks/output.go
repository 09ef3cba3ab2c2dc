package tasks

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/textline"
)

// OutputOptions are the arguments and flags of `brood tasks output`.
type OutputOptions struct {
	Factory *cmdutil.Factory
	ID      string
	Wait    bool
	Timeout time.Duration
	JSON    bool
}

// NewCmdOutput builds `brood tasks output ID`.
func NewCmdOutput(f *cmdutil.Factory, runF func(context.Context, *OutputOptions) error) *cobra.Command {
	opts := &OutputOptions{Factory: f}
	cmd := &cobra.Command{
		Use: "output ID",
		Example: `  brood tasks output 8XRTAB
  brood tasks output 8XRTAB --wait --timeout 5m`,
		Short: "Print a task's status and, once finished, its verified result",
		Args:  cobra.ExactArgs(1),
	}
	taskVerb(f, cmd, func(ctx context.Context, id string, _ []string) error {
		opts.ID = id
		if runF != nil {
			return runF(ctx, opts)
		}
		return outputRun(ctx, opts)
	})
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until the task finishes")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "with --wait, give up after this long")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func outputRun(ctx context.Context, opts *OutputOptions) error {
	f := opts.Factory
	t, err := dispatch.LoadTask(f.ProjectRoot, opts.ID)
	if err != nil {
		return err
	}
	// A dispatcher that reads the task's output: no hooks (nothing is
	// dispatched).
	rt, err := root.New(ctx, f, root.Options{Source: "cli", Task: t, Unobserved: true})
	if err != nil {
		return err
	}
	defer rt.Close()
	d, err := rt.MustDispatch("read a task's output")
	if err != nil {
		return err
	}
	wait := opts.Timeout
	if opts.Wait && wait == 0 {
		wait = 24 * time.Hour
	}
	status, text, err := d.Output(ctx, opts.ID, wait)
	if err != nil {
		return err
	}
	// The child wrote its result with what it knew for a secret; this
	// process knows every .env value and its environment's (red team 21
	// P2-2).
	text = f.Redactor.Redact(text)
	late, _ := spawn.Undelivered(f.ProjectRoot, opts.ID, false)
	if opts.JSON {
		v := map[string]any{"task_id": opts.ID, "status": status, "output": text}
		if len(late) > 0 {
			v["undelivered"] = late
		}
		return cmdutil.WriteJSON(f.Out, v)
	}
	w := termsafe.NewWriter(f.Out)
	fmt.Fprintf(w, "status: %s\n%s\n", status, strings.TrimRight(forPerson(opts.ID, status, text), "\n"))
	for _, msg := range late {
		fmt.Fprintf(w, "not delivered (the task ended first): %s\n", textline.Summary(msg, 0))
	}
	return nil
}

// resumeHint is the dispatcher's advice to the model on continuing a task.
var resumeHint = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^To continue this task, call Task with resume_task_id=.*$`)
})

// forPerson rewrites what the dispatcher tells the model (call TaskOutput,
// call Task with resume_task_id) as what a person types.
func forPerson(id, status, text string) string {
	if status == dispatch.StatusRunning || status == dispatch.StatusQueued {
		return fmt.Sprintf("task %s is still %s: wait for it with brood tasks output %s --wait, or steer it with brood tasks send %s \"...\"", id, status, id, id)
	}
	return resumeHint().ReplaceAllString(text, fmt.Sprintf("Continue it with: brood tasks resume %s \"...\"", id))
}

// firstLine is a message's first line, marked when there is more.
