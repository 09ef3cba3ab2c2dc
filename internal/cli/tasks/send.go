package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/spawn"
)

// SendOptions are the arguments of `brood tasks send`.
type SendOptions struct {
	Factory *cmdutil.Factory
	ID      string
	Message string
	JSON    bool
}

// NewCmdSend builds `brood tasks send ID MESSAGE`.
func NewCmdSend(f *cmdutil.Factory, runF func(*SendOptions) error) *cobra.Command {
	opts := &SendOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "send ID MESSAGE",
		Short: "Send a steering message to a running task (it arrives at its next turn)",
		Long: `Send a steering message to a running task. It reaches the task's model at
its next turn boundary, without interrupting the turn in progress. A task
that has ended takes no message: send fails (exit 1) and says how to resume
it with the message instead. A message that was queued but that the task
never read because it ended first is listed by brood tasks output as not
delivered.`,
		Example: `  brood tasks send 01JB7X "stop after the tests pass and report"`,
		Args:    cobra.MinimumNArgs(2),
	}
	taskVerb(f, cmd, func(ctx context.Context, id string, args []string) error {
		opts.ID = id
		opts.Message = strings.Join(args, " ")
		if runF != nil {
			return runF(opts)
		}
		return sendRun(opts)
	})
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func sendRun(opts *SendOptions) error {
	f := opts.Factory
	if err := spawn.Send(f.ProjectRoot, opts.ID, "the user (brood tasks send)", opts.Message); err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, map[string]any{"task_id": opts.ID, "queued": true})
	}
	fmt.Fprintf(f.Out, "message queued for task %s; it arrives at its next turn (if the task ends first, brood tasks output %s says it was not delivered)\n", opts.ID, opts.ID)
	return nil
}
