package fleetlink

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/termsafe"
)

// ShowCall prints a call on the fleet (brood tasks show): its status,
// where it runs (worker, attempt, last heartbeat) and, once ended, its
// result; engine.ErrNotFound when no fleet is configured or it has no
// such call.
func (Link) ShowCall(ctx context.Context, f *cmdutil.Factory, fl cmdutil.FleetFlags, id string, json bool) error {
	if !fl.Configured(f) {
		return engine.ErrNotFound
	}
	e, closeFn, err := Open(ctx, f, fl)
	if err != nil {
		return err
	}
	defer closeFn()
	t, err := e.Task(ctx, id)
	if err != nil {
		return err
	}
	if json {
		return cmdutil.WriteJSON(f.Out, t)
	}
	writeCall(termsafe.NewWriter(f.Out), t)
	return nil
}

// writeCall prints a fleet call's detail (brood tasks show): one count of
// attempts, the server's, in its header and its result; a refused call
// says who refused it, as it ran on no worker.
func writeCall(w io.Writer, t *temporal.FleetTaskDetail) {
	fmt.Fprintf(w, "task     %s (on the fleet: Temporal workflow %s)\nagent    %s\nstatus   %s\ncreated  %s\n",
		t.ID, t.Workflow, termsafe.Line(t.Agent), t.Status, t.Created.Format(time.RFC3339))
	if t.Description != "" {
		fmt.Fprintf(w, "brief    %s\n", termsafe.Line(t.Description))
	}
	if t.Unverified != "" {
		fmt.Fprintf(w, "started  %s\n", termsafe.Line(t.Unverified))
	}
	switch {
	case t.Refused && t.Worker != "":
		fmt.Fprintf(w, "refused  by worker %s (its attempt %d ran nothing; why below)\n", termsafe.Line(t.Worker), t.Attempt)
	case t.Refused:
		fmt.Fprintf(w, "refused  before any worker ran it (why below)\n")
	case t.Worker != "" && t.Result != nil:
		fmt.Fprintf(w, "worker   %s (ran it; %d attempt(s) on the fleet)\n", termsafe.Line(t.Worker), t.Attempt)
	case t.Worker != "":
		fmt.Fprintf(w, "worker   %s (attempt %d)\n", termsafe.Line(t.Worker), t.Attempt)
	}
	if hb := t.Heartbeat; hb != nil && !hb.Transcript.IsZero() {
		fmt.Fprintf(w, "transcript  %d bytes in the store, under %s\n", hb.Position, termsafe.Line(hb.Transcript.Key))
	}
	if t.LastFailure != "" {
		fmt.Fprintf(w, "last failure  %s\n", termsafe.Line(t.LastFailure))
	}
	if r := t.Result; r != nil {
		runs := fmt.Sprintf("%d attempt(s) on the fleet", max(r.Attempts, t.Attempt))
		if r.Attempts == 0 && r.Usage.Input == 0 && r.Usage.Output == 0 {
			// failedCall's result: no attempt came back with one.
			fmt.Fprintf(w, "\nresult (%s, %s, none of them returned a result):\n%s\n", r.Status, runs, r.Summary)
		} else {
			fmt.Fprintf(w, "\nresult (%s, %s, %d tokens in, %d out over them all):\n%s\n", r.Status, runs, r.Usage.Input, r.Usage.Output, r.Summary)
		}
		if r.QueuedMS > 0 || r.RanMS > 0 {
			fmt.Fprintf(w, "times    %s\n", cmdutil.Times(r.QueuedMS, r.RanMS, "a worker"))
		}
		if r.Error != "" && r.Error != t.LastFailure {
			fmt.Fprintf(w, "error    %s\n", termsafe.Line(r.Error))
		}
		for _, x := range r.Failures {
			fmt.Fprintf(w, "failure  %s\n", termsafe.Line(x))
		}
		if len(r.FilesChanged) > 0 {
			fmt.Fprintf(w, "files    %s\n", strings.Join(r.FilesChanged, ", "))
		}
	}
	if t.Landed != "" {
		fmt.Fprintf(w, "change   %s\n", termsafe.Line(t.Landed))
	}
}

// Calls lists the fleet's calls and runs (brood tasks).
func (Link) Calls(ctx context.Context, f *cmdutil.Factory, fl cmdutil.FleetFlags) ([]cmdutil.FleetCall, error) {
	e, closeFn, err := Open(ctx, f, fl)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	ts, err := e.Tasks(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]cmdutil.FleetCall, 0, len(ts))
	for _, t := range ts {
		out = append(out, cmdutil.FleetCall{ID: t.ID, Kind: t.Kind, Agent: t.Agent, Status: t.Status, Description: t.Description, Created: t.Created, Unchecked: t.Unchecked})
	}
	return out, nil
}

// ResumeCall continues a fleet call (brood subagent --engine temporal)
// with a follow-up prompt on whichever worker takes it: from its transcript
// in the fleet's store, a stopped writer from its change so far; a
// finished call's change its submitter never landed is landed first.
// Without a prompt it only lands that change.
func (Link) ResumeCall(ctx context.Context, f *cmdutil.Factory, fl cmdutil.FleetFlags, id, prompt string, json bool) error {
	eng, closeFn, err := Open(ctx, f, fl)
	if err != nil {
		return err
	}
	defer closeFn()
	if strings.TrimSpace(prompt) == "" {
		return land(ctx, f, eng, id, json)
	}
	r, err := eng.Call(ctx, call.Spec{Resume: id, Prompt: prompt})
	if err != nil {
		return err
	}
	return render.FleetCallResult(f.Out, r, json) // brood subagent --engine temporal's shape
}

// land lands a fleet call's change in this tree, when its submitter
// did not: one line, and a failing exit when the change is not in the tree.
func land(ctx context.Context, f *cmdutil.Factory, eng *temporal.Engine, id string, json bool) error {
	l, err := eng.LandCall(ctx, id)
	if err != nil {
		return err
	}
	if json {
		if err := cmdutil.WriteJSON(f.Out, l); err != nil {
			return err
		}
	} else {
		line := map[string]string{
			"landed":     "landed the change of fleet call %s in your tree: %s\n",
			"in_tree":    "fleet call %s: %s; nothing was landed again\n",
			"kept":       "the change of fleet call %s is not in your tree: %s\n",
			"none":       "fleet call %s: %s\n",
			"unfinished": "fleet call %s: %s\n",
			"unverified": "the change of fleet call %s is not in your tree: %s\n",
		}[l.State]
		fmt.Fprintf(termsafe.NewWriter(f.Out), line, l.TaskID, strings.TrimPrefix(l.Message, "fleet copy: "))
	}
	if l.State == "unverified" {
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("task %s: its change was not landed: nothing here says its run is your call", l.TaskID))
	}
	if l.State == "kept" {
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("task %s: its change did not apply to your tree; it is kept where the line above says (merge it by hand)", l.TaskID))
	}
	return nil
}
