package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/jsonstr"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
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

// logLineCap is the longest transcript line `brood tasks log` reads: a
// longer one (a child may write anything to its transcript) is named and
// skipped, never held in memory.
const logLineCap = 32 << 20

func logRun(opts *LogOptions) error {
	f := opts.Factory
	path := filepath.Join(dispatch.Dir(f.ProjectRoot, opts.ID), dispatch.SessionFile)
	// The child's file: opened as every child-writable file is, no link
	// followed, a regular file only, never blocking on a FIFO it made.
	var file *os.File
	td, err := taskdir.Open(f.ProjectRoot).Find(opts.ID)
	if err == nil {
		path = td.File(taskdir.Session)
		file, err = td.OpenRead(taskdir.Session)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("task %s has no transcript (%s is missing); see `brood tasks`", opts.ID, path)
	}
	if err != nil {
		return fmt.Errorf("task %s: cannot read its transcript: %v", opts.ID, err)
	}
	defer file.Close()
	lines, readErr := session.Stream(file, logLineCap)
	if opts.JSON {
		err = streamJSON(f.Out, redacted(lines, f.Redactor.Redact))
	} else {
		err = streamText(termsafe.NewWriter(f.Out), redacted(lines, f.Redactor.Redact))
	}
	if err == nil {
		err = readErr()
	}
	if err != nil {
		return fmt.Errorf("task %s: reading its transcript %s: %v", opts.ID, path, err)
	}
	if note := callsNote(f.ProjectRoot, opts.ID); note != "" {
		// Said beside the transcript, never in it: on stderr under --json.
		w := f.Out
		if opts.JSON {
			w = f.Err
		}
		_, err = fmt.Fprintln(termsafe.NewWriter(w), "Note: "+note)
	}
	return err
}

// callsNote says where the task's transcript and its parent's own record
// of its tool calls disagree ("" when they agree or the task has no
// parent record to hold it to).
func callsNote(projectRoot, id string) string {
	t, err := dispatch.LoadTask(projectRoot, id)
	if err != nil || t.Records() == nil || t.Files() == nil {
		return ""
	}
	return spawn.CallsDisagreement(t.Files(), *t.Records())
}

// redacted is lines with every string of each record redacted by this
// process's redactor (the environment's secrets and the project's .env
// values, all of them), before anything cuts a line short: a child's
// transcript holds what the child did not know for a secret (red team 21
// P2-2: a value its parent did not pass it), and is the child's to write.
func redacted(lines iter.Seq[session.Line], redact func(string) string) iter.Seq[session.Line] {
	return func(yield func(session.Line) bool) {
		for l := range lines {
			if !l.Over && !l.Bad {
				l.Record = redactRecord(l.Record, redact)
			}
			if !yield(l) {
				return
			}
		}
	}
}

// redactRecord is r with every string in it redacted, after JSON decoding
// (a tool call's input included).
func redactRecord(r session.Record, redact func(string) string) session.Record {
	b, err := json.Marshal(r)
	if err != nil {
		return r
	}
	var out session.Record
	if json.Unmarshal(jsonstr.Map(b, redact), &out) != nil {
		return r
	}
	return out
}

// streamText prints the transcript readably, one record at a time, and
// says which lines it skipped.
func streamText(w io.Writer, lines iter.Seq[session.Line]) error {
	bad := 0
	for l := range lines {
		switch {
		case l.Over:
			fmt.Fprintf(w, "(line %d: %s, skipped: longer than %s)\n", l.N, humanBytes(l.Size), humanBytes(logLineCap))
		case l.Bad:
			bad++
		default:
			printTranscript(w, []session.Record{l.Record})
		}
	}
	if bad > 0 {
		_, err := fmt.Fprintf(w, "(%d torn line(s) skipped: the process was killed mid-write)\n", bad)
		return err
	}
	return nil
}

// streamJSON writes the transcript's records as one JSON array, one
// record at a time; a line over the cap is skipped as a torn one is.
func streamJSON(w io.Writer, lines iter.Seq[session.Line]) error {
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	sep := "  "
	for l := range lines {
		if l.Over || l.Bad {
			continue
		}
		b, err := json.MarshalIndent(l.Record, "  ", "  ")
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, sep+string(termsafe.JSON(b))); err != nil {
			return err
		}
		sep = ",\n  "
	}
	_, err := io.WriteString(w, "\n]\n")
	return err
}

// humanBytes is n in B, KB or MB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
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
