package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

func newTasksCmd(app *App) *cobra.Command {
	var asJSON bool
	var status string
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List, inspect, resume and steer subagent dispatches",
		Long: `Every dispatch is recorded under .brood/dispatch/<task_id>/ (envelope, transcript,
result, process outcome, dispatch log). ` + "`brood tasks`" + ` lists them with their true
status: a child whose process died without a result shows as killed, and can be
resumed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if status != "" && !knownStatus(status) {
				return fmt.Errorf("--status %q: want one of queued, running, done, partial, checkpoint, failed, killed, cancelled", status)
			}
			tasks, err := dispatch.ListTasks(app.ProjectRoot)
			if err != nil {
				return err
			}
			if status != "" {
				var keep []*dispatch.Task
				for _, t := range tasks {
					if strings.EqualFold(t.Status, status) {
						keep = append(keep, t)
					}
				}
				tasks = keep
			}
			if asJSON {
				rows := make([]taskRow, 0, len(tasks))
				for _, t := range tasks {
					rows = append(rows, newTaskRow(t))
				}
				return writeJSON(app.Out, rows)
			}
			if len(tasks) == 0 {
				if status != "" {
					fmt.Fprintf(app.Out, "no tasks with status %s in %s\n", status, dispatch.Root(app.ProjectRoot))
				} else {
					fmt.Fprintln(app.Out, "no dispatches yet in", dispatch.Root(app.ProjectRoot))
				}
				return nil
			}
			tw := tabwriter.NewWriter(app.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tAGE\tDURATION\tTOKENS\tDESCRIPTION")
			for _, t := range tasks {
				desc := t.Label
				if t.Note != "" {
					desc += " (" + t.Note + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", t.ID, t.Agent, t.Status, age(t.Created), dur(t.Duration), t.Tokens, trimTo(desc, 70))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&status, "status", "", "only tasks with this status (queued, running, done, partial, checkpoint, failed, killed, cancelled)")
	cmd.AddCommand(newTasksShowCmd(app), newTasksLogCmd(app), newTasksPruneCmd(app))
	addTaskActions(cmd, app)
	return cmd
}

// taskRow is one line of `brood tasks --json`: what the table shows, plus
// the usage and the resume handle.
type taskRow struct {
	ID          string     `json:"id"`
	Dir         string     `json:"dir"`
	Agent       string     `json:"agent"`
	Status      string     `json:"status"`
	Description string     `json:"description,omitempty"`
	Note        string     `json:"note,omitempty"`
	Created     time.Time  `json:"created"`
	DurationMS  int64      `json:"duration_ms,omitempty"`
	Tokens      int64      `json:"tokens"`
	Depth       int        `json:"depth"`
	Parent      string     `json:"parent_task_id,omitempty"`
	Result      *rowResult `json:"result,omitempty"`
}

// rowResult is the part of result.json a listing needs.
type rowResult struct {
	Status       string      `json:"status"`
	Usage        model.Usage `json:"usage"`
	ChildUsage   model.Usage `json:"child_usage"`
	ResumeHandle string      `json:"resume_handle,omitempty"`
}

func newTaskRow(t *dispatch.Task) taskRow {
	r := taskRow{ID: t.ID, Dir: t.Dir, Agent: t.Agent, Status: t.Status, Description: t.Label, Note: t.Note, Created: t.Created,
		DurationMS: t.Duration, Tokens: t.Tokens, Depth: t.Depth, Parent: t.Parent}
	if t.Result != nil {
		r.Result = &rowResult{Status: t.Result.Status, Usage: t.Result.Usage, ChildUsage: t.Result.ChildUsage, ResumeHandle: t.Result.ResumeHandle}
	}
	return r
}

func newTasksShowCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a dispatch's envelope, result, process outcome and dispatch log",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := dispatch.LoadTask(app.ProjectRoot, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(app.Out, t)
			}
			w := app.Out
			fmt.Fprintf(w, "task     %s\nagent    %s\nstatus   %s\n", t.ID, t.Agent, t.Status)
			if t.Note != "" {
				fmt.Fprintf(w, "note     %s\n", t.Note)
			}
			fmt.Fprintf(w, "dir      %s\n", t.Dir)
			for _, part := range []struct {
				name string
				v    any
			}{{"envelope", t.Envelope}, {"result", t.Result}, {"output", t.Output}, {"dispatch log", t.Log}} {
				if part.v == nil || isNilPtr(part.v) {
					fmt.Fprintf(w, "\n── %s: none\n", part.name)
					continue
				}
				fmt.Fprintf(w, "\n── %s\n", part.name)
				b, _ := json.MarshalIndent(part.v, "", "  ")
				fmt.Fprintln(w, string(b))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func isNilPtr(v any) bool {
	switch x := v.(type) {
	case *dispatch.Envelope:
		return x == nil
	case *dispatch.Result:
		return x == nil
	case *dispatch.Output:
		return x == nil
	case *dispatch.Log:
		return x == nil
	}
	return false
}

func newTasksLogCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "log ID",
		Short: "Print a dispatch's transcript, readably",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := filepath.Join(dispatch.Dir(app.ProjectRoot, args[0]), dispatch.SessionFile)
			recs, bad, err := session.ReadFile(path)
			if err != nil {
				return fmt.Errorf("task %s has no transcript (%v); see `brood tasks`", args[0], err)
			}
			if asJSON {
				return writeJSON(app.Out, recs)
			}
			printTranscript(app.Out, recs)
			if bad > 0 {
				fmt.Fprintf(app.Out, "(%d torn line(s) skipped: the process was killed mid-write)\n", bad)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
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
					fmt.Fprintf(w, "%s %s → %s %s\n", ts, r.Message.Role, p.Name, trimTo(string(p.Input), 200))
				}
			}
		case session.RecToolResult:
			mark := "✓"
			if r.IsError {
				mark = "✗"
			}
			fmt.Fprintf(w, "%s   %s %s: %s\n", ts, mark, r.Tool, trimTo(firstLine(r.Output, 300), 300))
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

func newTasksPruneCmd(app *App) *cobra.Command {
	var older time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION",
		Short: "Delete the records of finished dispatches older than DURATION",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if older <= 0 {
				return errors.New("prune needs --older-than, e.g. --older-than 168h")
			}
			tasks, err := dispatch.ListTasks(app.ProjectRoot)
			if err != nil {
				return err
			}
			var pruned []string
			for _, t := range tasks {
				if t.Status == dispatch.StatusRunning || t.Status == dispatch.StatusQueued || time.Since(t.Created) < older {
					continue
				}
				// Never pull a task from under a process that owns it.
				unlock, err := dispatch.LockDir(t.Files())
				if err != nil {
					continue
				}
				err = t.Files().Remove()
				unlock()
				if err != nil {
					return err
				}
				dispatch.Records(app.ProjectRoot).RemoveAll(t.ID)
				pruned = append(pruned, t.ID)
			}
			if asJSON {
				return writeJSON(app.Out, map[string]any{"pruned": nonNilStrings(pruned)})
			}
			fmt.Fprintf(app.Out, "pruned %d dispatch(es) older than %s\n", len(pruned), older)
			return nil
		},
	}
	cmd.Flags().DurationVar(&older, "older-than", 0, "age of the records to delete (e.g. 72h)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func knownStatus(s string) bool {
	s = strings.ToLower(s)
	return dispatch.ValidStatus(s) || s == dispatch.StatusRunning || s == dispatch.StatusQueued
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return dur(time.Since(t).Milliseconds()) + " ago"
}

func dur(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case ms <= 0:
		return "-"
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func trimTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
