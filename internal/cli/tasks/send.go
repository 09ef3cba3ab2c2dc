package tasks

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/delegate"
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
		Use:               "send ID MESSAGE",
		Short:             "Send a steering message to a running task (it arrives at its next turn)",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: f.CompleteTaskIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Message = args[0], strings.Join(args[1:], " ")
			id, err := f.ResolveTaskID(opts.ID)
			if err != nil {
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(opts)
			}
			return sendRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func sendRun(opts *SendOptions) error {
	f := opts.Factory
	if err := delegate.Send(f.ProjectRoot, opts.ID, "the user (brood tasks send)", opts.Message); err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, map[string]any{"task_id": opts.ID, "queued": true})
	}
	fmt.Fprintf(f.Out, "message queued for task %s; it arrives at its next turn\n", opts.ID)
	return nil
}
