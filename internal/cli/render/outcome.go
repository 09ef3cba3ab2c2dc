package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/termsafe"
)

// CallResult prints an agent call's verified result (`brood subagent`, `brood
// tasks resume`) and returns the exit status it maps to. A child that
// finished but whose change did not land in the tree (patch not-applied)
// is not done: its status reads not-applied, as a plan's call's does, and
// it exits 1, whichever engine ran it.
func CallResult(w io.Writer, o *call.Result, asJSON bool) error {
	status := shownStatus(o)
	if asJSON {
		m := map[string]any{"task_id": o.TaskID, "status": status, "summary": o.Summary, "result": o.Record, "output": o.Process, "text": o.Text, "verification": o.Failures}
		if o.Patch != "" {
			m["patch"] = o.Patch
		}
		if err := cmdutil.WriteJSON(w, m); err != nil {
			return err
		}
		if len(o.Failures) > 0 {
			return cmdutil.ExitCode(cmdutil.ExitFailed, nil)
		}
		return outcomeExit(o, status)
	}
	fmt.Fprint(termsafe.NewWriter(w), o.Text)
	if len(o.Failures) > 0 {
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("task %s failed verification", o.TaskID))
	}
	if strings.Contains(o.Error, " was refused: ") && strings.Contains(o.Text, "Error: "+o.Error) {
		// The result above says the refusal, with its advice, whole
		// (newuser P3-4): once is enough.
		said := *o
		said.Error = "the Error line above says why"
		return outcomeExit(&said, status)
	}
	return outcomeExit(o, status)
}

// notApplied is the status of a finished call whose change is not in the
// tree (call.PatchNotApplied), the word a plan's call has for it.
const notApplied = dispatch.StatusNotApplied

// shownStatus is the status the user reads: the child's, except that a
// done child whose change did not land is not-applied.
func shownStatus(o *call.Result) string {
	if o.Status == dispatch.StatusDone && o.Patch == call.PatchNotApplied {
		return notApplied
	}
	return o.Status
}

// outcomeExit maps how a task ended to the exit status, as brood run does
// (cmdutil.ExitStatusHelp).
func outcomeExit(o *call.Result, status string) error {
	if o.Record == nil && o.Status == "" {
		return nil
	}
	code := cmdutil.StatusCode(status)
	switch status {
	case dispatch.StatusDone:
		return nil
	case notApplied:
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("task %s: its change did not land in your tree (not applied); its patch is kept, the result says where: brood tasks show %s", o.TaskID, o.TaskID))
	case dispatch.StatusCancelled, dispatch.StatusPartial, dispatch.StatusCheckpoint:
		return cmdutil.ExitCode(code, fmt.Errorf("task %s %s; resume it with: brood tasks resume %s \"...\"", o.TaskID, o.Status, o.TaskID))
	}
	return cmdutil.ExitCode(code, fmt.Errorf("task %s %s: %s", o.TaskID, o.Status, o.Error))
}
