package render

import (
	"fmt"
	"io"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/termsafe"
)

// CallResult prints an agent call's verified result (`brood subagent`, `brood
// tasks resume`) and returns the exit status it maps to.
func CallResult(w io.Writer, o *call.Result, asJSON bool) error {
	if asJSON {
		if err := cmdutil.WriteJSON(w, map[string]any{"task_id": o.TaskID, "status": o.Status, "summary": o.Summary, "result": o.Record, "output": o.Process, "text": o.Text, "verification": o.Failures}); err != nil {
			return err
		}
		if len(o.Failures) > 0 {
			return cmdutil.ExitCode(cmdutil.ExitFailed, nil)
		}
		return outcomeExit(o)
	}
	fmt.Fprint(termsafe.NewWriter(w), o.Text)
	if len(o.Failures) > 0 {
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("task %s failed verification", o.TaskID))
	}
	return outcomeExit(o)
}

// outcomeExit maps how a task ended to the exit status, as brood run does
// (cmdutil.ExitStatusHelp).
func outcomeExit(o *call.Result) error {
	if o.Record == nil && o.Status == "" {
		return nil
	}
	code := cmdutil.StatusCode(o.Status)
	switch o.Status {
	case dispatch.StatusDone:
		return nil
	case dispatch.StatusCancelled, dispatch.StatusPartial, dispatch.StatusCheckpoint:
		return cmdutil.ExitCode(code, fmt.Errorf("task %s %s; resume it with: brood tasks resume %s \"...\"", o.TaskID, o.Status, o.TaskID))
	}
	return cmdutil.ExitCode(code, fmt.Errorf("task %s %s: %s", o.TaskID, o.Status, o.Error))
}
