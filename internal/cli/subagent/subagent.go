// Package subagent is `brood subagent TYPE PROMPT`: a dispatch made by the
// user directly, bypassing the model's choice but validated against the
// registry as the model's are.
package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/termsafe"
)

// Options are the arguments and flags of `brood subagent`.
type Options struct {
	Factory *cmdutil.Factory

	Agent       string
	Prompt      string
	JSON        bool
	Background  bool
	Isolation   string
	Model       string
	Description string
	PermMode    string
	Allow       []string
	Deny        []string
	// Engine is --engine, local (this process's pool) or temporal (a
	// worker of the fleet runs it), and where the fleet is.
	Engine root.EngineFlags
}

// NewCmdSubagent builds `brood subagent`. runF replaces the dispatch.
func NewCmdSubagent(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "subagent TYPE PROMPT",
		Short: "Dispatch a subagent directly, bypassing the model's choice (validated against the registry)",
		Example: `  brood subagent explore "How does the auth middleware work?"
  brood subagent general-purpose "Add a --json flag to the export command and update its tests"`,
		Args:              cobra.MinimumNArgs(2),
		Annotations:       map[string]string{cmdutil.FleetAnnotation: cmdutil.FleetEngineOnly}, // brood-fleet runs --engine temporal
		ValidArgsFunction: f.CompleteAgents,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Agent, opts.Prompt = args[0], strings.Join(args[1:], " ")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return subagentRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.JSON, "json", false, "print JSON")
	fl.BoolVar(&opts.Background, "background", false, "print the task id at once, then wait for it (Ctrl-C stops it; it stays resumable)")
	fl.StringArrayVar(&opts.Allow, "allow", nil, "permission rule the subagent may use without asking, e.g. 'Bash(go test:*)' (repeatable)")
	fl.StringArrayVar(&opts.Deny, "deny", nil, "permission rule to deny (repeatable)")
	fl.StringVar(&opts.PermMode, "permission-mode", "", "default, acceptEdits, bypassPermissions, plan or dontAsk")
	fl.StringVar(&opts.Isolation, "isolation", "", "worktree: run on an isolated copy of the tree")
	fl.StringVar(&opts.Model, "model", "", "model as provider/model (default: settings or BROOD_MODEL)")
	fl.StringVar(&opts.Description, "description", "", "a short label for the task (default: the prompt's first line)")
	opts.Engine.AddEngineFlag(cmd, false, "subagents")
	opts.Engine.Fleet.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("model", f.CompleteModels)
	_ = cmd.RegisterFlagCompletionFunc("isolation", cobra.FixedCompletions([]string{"worktree", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("permission-mode", cobra.FixedCompletions([]string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func subagentRun(ctx context.Context, opts *Options) error {
	f := opts.Factory
	remote, err := opts.Engine.Remote()
	if err != nil {
		return err
	}
	if remote {
		return fleetRun(ctx, opts)
	}
	// --json prints one document, the outcome: the children's progress
	// lines are for a terminal.
	var onEvent func(spawn.Event)
	if !opts.JSON {
		onEvent = render.New(f.Out, render.RedactWriter(f.Err, f.Redactor.Redact), "text").DispatchEvent
	}
	rt, err := root.New(ctx, f, root.Options{
		Model: opts.Model, NeedModel: true, Perms: cmdutil.PermissionFlags{Mode: opts.PermMode, Allow: opts.Allow, Deny: opts.Deny},
		OnEvent: onEvent, Quiet: opts.JSON,
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	d, err := rt.MustDispatch("dispatch")
	if err != nil {
		return err
	}
	s := call.Spec{Agent: opts.Agent, Prompt: opts.Prompt, Description: cmdutil.FirstNonEmpty(opts.Description, cmdutil.FirstLine(opts.Prompt, 80)), Isolation: opts.Isolation}
	if opts.Background {
		return background(ctx, opts, d, s)
	}
	eng, closeFn, err := rt.Engine(ctx, opts.Engine)
	if err != nil {
		return err
	}
	defer closeFn()
	r, err := eng.Call(ctx, s)
	if err != nil {
		return err
	}
	return render.CallResult(f.Out, r, opts.JSON)
}

// fleetRun hands the call to a worker of the fleet and waits for its
// verified result (Ctrl-C cancels it there; the child stops in stages).
func fleetRun(ctx context.Context, opts *Options) error {
	f := opts.Factory
	switch {
	case opts.Background:
		return &cmdutil.ExitError{Code: 2, Err: errors.New("--background runs here only; on the fleet a call is durable already: it goes on if this process stops, and brood tasks show TASK_ID follows it")}
	case opts.Model != "" || opts.PermMode != "" || len(opts.Allow) > 0 || len(opts.Deny) > 0:
		return &cmdutil.ExitError{Code: 2, Err: errors.New("--model and the permission flags are the worker's settings on the fleet; set them where brood worker runs")}
	}
	if !opts.Engine.Fleet.Configured(f) {
		return &cmdutil.ExitError{Code: 2, Err: root.ErrNoFleet}
	}
	if _, ok := f.Registry().Get(opts.Agent); !ok {
		return fmt.Errorf("unknown agent type %q; brood agents list shows them", opts.Agent)
	}
	eng, closeFn, err := root.OpenFleet(ctx, f, opts.Engine.Fleet)
	if err != nil {
		return err
	}
	defer closeFn()
	if s, ok := eng.(interface{ SetCallStatus(func(string, string)) }); ok {
		// On stderr, JSON or not: never silent while no worker answers.
		s.SetCallStatus(func(id, status string) { fmt.Fprintf(f.Err, "task %s %s\n", id, termsafe.Line(status)) })
	}
	r, err := eng.Call(ctx, call.Spec{Agent: opts.Agent, Prompt: opts.Prompt, Description: cmdutil.FirstNonEmpty(opts.Description, cmdutil.FirstLine(opts.Prompt, 80)), Isolation: opts.Isolation})
	if err != nil {
		return err
	}
	if err := fleetResult(f.Out, r, opts.JSON); err != nil {
		return err
	}
	if r.Patch == call.PatchNotApplied {
		// Done on the fleet, but its work is not in this tree.
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("task %s: its change did not land in your tree; the patch is kept (see the result): brood tasks show %s", r.TaskID, r.TaskID))
	}
	return nil
}

// fleetResult prints a fleet call's result as a local one's
// (render.FleetCallResult).
func fleetResult(w io.Writer, r *call.Result, asJSON bool) error {
	return render.FleetCallResult(w, r, asJSON)
}

// background starts the task, prints its id at once, then waits for it.
func background(ctx context.Context, opts *Options, d *spawn.Dispatcher, s call.Spec) error {
	f := opts.Factory
	id, err := d.Start(ctx, s)
	if err != nil {
		return err
	}
	// In the background the command streams: JSON lines, one as the task
	// starts and one as it finishes.
	if opts.JSON {
		writeLine(f.Out, map[string]string{"task_id": id, "status": "started"})
	} else {
		fmt.Fprintf(f.Out, "task %s started; follow it with: brood tasks output %s --wait (Ctrl-C here stops it, and it stays resumable)\n", id, id)
	}
	d.WaitBackground()
	status, _, err := d.Output(ctx, id, 0)
	if err != nil {
		return err
	}
	if opts.JSON {
		writeLine(f.Out, map[string]string{"task_id": id, "status": status})
	}
	fmt.Fprintf(f.Err, "task %s finished: %s\n", id, status)
	if code := cmdutil.StatusCode(status); code != cmdutil.ExitOK {
		return cmdutil.ExitCode(code, nil)
	}
	return nil
}

// writeLine writes v as one compact JSON line.
func writeLine(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}
