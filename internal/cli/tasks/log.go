package tasks

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/termsafe"
)

// LogOptions are the arguments of `brood tasks log`.
type LogOptions struct {
	Factory *cmdutil.Factory
	ID      string
	JSON    bool
}

// NewCmdLog builds `brood tasks log ID`.
func NewCmdLog(f *cmdutil.Factory, runF func(*LogOptions) error) *cobra.Command {
	opts := &LogOptions{Factory: f}
	cmd := &cobra.Command{
		Use: "log ID",
		Example: `  brood tasks log 8XRTAB
  brood tasks log 8XRTAB --json`,
		Short: "Print a dispatch's transcript, readably",
		Args:  cobra.ExactArgs(1),
	}
	taskVerb(f, cmd, func(ctx context.Context, id string, _ []string) error {
		opts.ID = id
		if runF != nil {
			return runF(opts)
		}
		return logRun(opts)
	})
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func logRun(opts *LogOptions) error {
	f := opts.Factory
	path := filepath.Join(dispatch.Dir(f.ProjectRoot, opts.ID), dispatch.SessionFile)
	recs, bad, err := session.ReadFile(path)
	if err != nil {
		return fmt.Errorf("task %s has no transcript (%v); see `brood tasks`", opts.ID, err)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, recs)
	}
	printTranscript(termsafe.NewWriter(f.Out), recs)
	if bad > 0 {
		fmt.Fprintf(f.Out, "(%d torn line(s) skipped: the process was killed mid-write)\n", bad)
	}
	return nil
}

func printTranscript(w io.Writer, recs []session.Record) {
	for _, r := range recs {
		ts := r.Time.Local().Format("15:04:05")
		switch r.Type {
		case session.RecMeta:
			fmt.Fprintf(w, "%s ═══ run of %s on %s\n", ts, r.Agent, r.Model)
		case session.RecMessage:
			if r.Message == nil {
				continue
			}
			for _, p := range r.Message.Content {
				switch p.Type {
				case "text":
					if strings.TrimSpace(p.Text) != "" {
						fmt.Fprintf(w, "%s %s: %s\n", ts, r.Message.Role, indent(p.Text))
					}
				case "tool_use":
					fmt.Fprintf(w, "%s %s → %s %s\n", ts, r.Message.Role, p.Name, cmdutil.TrimTo(string(p.Input), 200))
				}
			}
		case session.RecToolResult:
			mark := "✓"
			if r.IsError {
				mark = "✗"
			}
			if len(r.Input) > 0 {
				fmt.Fprintf(w, "%s   ran %s %s (a PreToolUse hook replaced the input)\n", ts, r.Tool, cmdutil.TrimTo(string(r.Input), 200))
			}
			fmt.Fprintf(w, "%s   %s %s: %s\n", ts, mark, r.Tool, cmdutil.TrimTo(cmdutil.FirstLine(r.Output, 300), 300))
		case session.RecSteer:
			fmt.Fprintf(w, "%s ✉ %s\n", ts, indent(r.Text))
		case session.RecUsage:
			if r.Usage != nil {
				fmt.Fprintf(w, "%s   tokens in %d out %d\n", ts, r.Usage.Input, r.Usage.Output)
			}
		case session.RecEnd:
			fmt.Fprintf(w, "%s ═══ %s after %d turns %s\n", ts, r.Status, r.Turn, r.Text)
		}
	}
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n         ")
}
