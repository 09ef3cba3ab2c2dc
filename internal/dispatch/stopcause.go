package dispatch

import (
	"context"
	"errors"
	"strings"
)

// StopCause says, in the user's words, why ctx stopped, from what brood
// recorded of it (its cause): "stopped: the run was interrupted
// (Ctrl-C)" for the SIGINT a root's signal handler turns into its cause,
// "stopped: its time limit" for a deadline. inChild is whether this process is
// itself a subagent, whose SIGTERM is its parent's doing. "" while ctx
// runs.
func StopCause(ctx context.Context, inChild bool) string {
	if ctx.Err() == nil {
		return ""
	}
	cause := context.Cause(ctx)
	switch msg := cause.Error(); {
	case errors.Is(cause, context.DeadlineExceeded):
		return "stopped: its time limit"
	case strings.HasPrefix(msg, "interrupt signal"):
		return "stopped: the run was interrupted (Ctrl-C)"
	case strings.HasPrefix(msg, "terminated signal") && inChild:
		return "stopped: its parent stopped it (it was stopped itself)"
	case strings.HasPrefix(msg, "terminated signal"):
		return "stopped: the run was terminated (SIGTERM)"
	case strings.HasPrefix(msg, "hangup signal"):
		return "stopped: the run's terminal closed (SIGHUP)"
	case strings.HasPrefix(msg, "quit signal"):
		return "stopped: the run was quit (SIGQUIT)"
	case cause == context.Canceled:
		return "stopped: the run it belongs to ended before it finished"
	case strings.HasPrefix(msg, "stopped"):
		return msg
	}
	return "stopped: " + cause.Error()
}
