package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/termsafe"
)

// ShowOptions are the arguments of `brood tasks show`.
type ShowOptions struct {
	Factory *cmdutil.Factory
	ID      string
	JSON    bool
	Fleet   root.FleetFlags
}

// NewCmdShow builds `brood tasks show ID`.
func NewCmdShow(f *cmdutil.Factory, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Factory: f}
	cmd := &cobra.Command{
		Use: "show ID",
		Example: `  brood tasks show 01KBN5Q7MZ8X    # any unique prefix of the id
  brood tasks show 8XRTAB          # or part of it: the tail of the shown 01KBN5Q7MZ8XRTAB
  brood tasks show 8XRTAB --json
  brood tasks show 01KBN5Q7MZ8X --temporal 127.0.0.1:7233   # a fleet call or run`,
		Short: "Show a dispatch, or a fleet call or run: status, agent, brief, times, tokens and the start of its result",
		Long: `Show a dispatch as a person reads it: its status, agent, brief, when it ran and
for how long, its tokens and the first lines of its result. --json prints every
record (envelope, result, process outcome, dispatch log). ID is any unique
prefix or tail of the task's id, or a unique part of it of at least six
characters (such as the tail of the id brood tasks shows).

With a fleet (--temporal HOST:PORT or temporal.address), an id this machine
has no dispatch of is looked up on the fleet: a call of brood subagent
--engine temporal (its worker and attempt, last heartbeat, result and what
became of its change here), a plan run, or a call of a run.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.CompleteTaskIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			id, err := f.ResolveTaskID(opts.ID)
			if err != nil {
				// Not here: a call on the fleet, when one is configured.
				if !opts.Fleet.Configured(f) {
					return err
				}
				link, ferr := f.FleetLink()
				if ferr == nil {
					if ferr = link.ShowCall(cmd.Context(), f, opts.Fleet, opts.ID, opts.JSON); ferr == nil {
						return nil
					}
				}
				if errors.Is(ferr, shortid.ErrAmbiguous) {
					return ferr // it names the candidates (fleetqa3 P2-1)
				}
				// Not reached, or it no longer has it: a plan's call as
				// this project kept its run's result.
				if k, kerr := findKeptCall(f.ProjectRoot, opts.ID); kerr != nil {
					return kerr
				} else if k != nil {
					if !errors.Is(ferr, engine.ErrNotFound) {
						k.Fleet = ferr.Error()
					}
					return showKept(f.Out, k, opts.JSON)
				}
				if errors.Is(ferr, engine.ErrNotFound) {
					return notHereNorFleet(f, opts.Fleet, opts.ID)
				}
				return fmt.Errorf("%v (and the fleet: %v)", err, ferr)
			}
			opts.ID = id
			if runF != nil {
				return runF(opts)
			}
			return showRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	opts.Fleet.AddFlags(cmd)
	return cmd
}

// excerptLines is how much of a result `tasks show` prints; `tasks
// output` prints it whole.
const excerptLines = 15

// showRun is the human view of a task: what it was asked, how it went,
// what it cost and the start of its result. --json prints every record.
func showRun(opts *ShowOptions) error {
	f := opts.Factory
	t, err := dispatch.LoadTask(f.ProjectRoot, opts.ID)
	if err != nil {
		return err
	}
	// Every record a task holds passes the redactor on its way out: its
	// envelope keeps the brief whole for the child, secrets and all
	// (docs/secrets.md; review41 P1-1).
	out := io.Writer(f.Out)
	if f.Redactor != nil {
		rw := f.Redactor.Writer(f.Out)
		defer rw.Close()
		out = rw
	}
	if opts.JSON {
		return cmdutil.WriteJSON(out, t)
	}
	w := termsafe.NewWriter(out)
	fmt.Fprintf(w, "task     %s\nagent    %s\nstatus   %s\n", t.ID, termsafe.Line(t.Agent), t.Status)
	if note := t.Note; note != "" {
		if why, ok := strings.CutPrefix(note, "rejected by its parent: "); ok && t.Verdict != nil {
			// (said whole on the ended line: newuser P3-4)
			note = "rejected by its parent: " + dispatch.Refer(why, t.Verdict.Error, "the ended line below says why")
		}
		fmt.Fprintf(w, "note     %s\n", termsafe.Line(note))
	}
	if t.Label != "" {
		fmt.Fprintf(w, "brief    %s\n", termsafe.Line(cmdutil.TrimTo(f.Redactor.Redact(t.Label), 200)))
	}
	if t.Parent != "" {
		fmt.Fprintf(w, "parent   %s (depth %d)\n", t.Parent, t.Depth)
	}
	fmt.Fprintf(w, "created  %s (%s)\n", t.Created.Local().Format(time.DateTime), cmdutil.Age(t.Created))
	if t.Duration > 0 {
		fmt.Fprintf(w, "took     %s\n", cmdutil.Dur(t.Duration))
	}
	if l, o := t.Log, t.Output; l != nil && o != nil && !l.Queued.IsZero() && !o.Started.IsZero() && !o.Started.Before(l.Queued) {
		fmt.Fprintf(w, "times    %s\n", cmdutil.Times(o.Started.Sub(l.Queued).Milliseconds(), o.WallMS, "a pool slot"))
	}
	fmt.Fprintf(w, "tokens   %d", t.Tokens)
	if r := t.Result; r != nil {
		fmt.Fprintf(w, " (%d in, %d out", r.Usage.Input, r.Usage.Output)
		if c := r.ChildUsage; c.Input+c.Output > 0 {
			fmt.Fprintf(w, "; its subagents %d in, %d out", c.Input, c.Output)
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintf(w, "\ndir      %s\n", t.Dir)
	showVerdict(w, t)
	for _, p := range t.Problems {
		fmt.Fprintf(w, "problem  %s\n", termsafe.Line(p))
	}
	showCopies(w, f, t)
	if r := t.Result; (r == nil || len(r.FilesChanged) == 0) && (t.Status == dispatch.StatusCancelled || t.Status == dispatch.StatusKilled) {
		if files := t.TranscriptEdits(); len(files) > 0 {
			fmt.Fprintf(w, "files    %s (edits its transcript records; its result names none: it was stopped)\n", termsafe.Line(strings.Join(files, ", ")))
		}
	}
	if r := t.Result; r != nil {
		showResult(w, t, r)
	} else {
		fmt.Fprintln(w, "\nno result yet")
	}
	fmt.Fprintf(w, "\nevery record (envelope, result, output, dispatch log): brood tasks show %s --json\n", t.ID)
	return nil
}

// showCopies says what became of the task's copies of the repository.
func showCopies(w io.Writer, f *cmdutil.Factory, t *dispatch.Task) {
	copies, err := isolate.Leftovers(context.Background(), copyRepo(f.ProjectRoot, t), t.ID, t.Files().Path())
	if err != nil {
		return
	}
	for _, c := range copies {
		if c.Unapplied {
			fmt.Fprintf(w, "copy     %s (%s) holds work never applied. %s\n", c.Path, c.Mode, copyHint(t.ID, c))
		} else {
			fmt.Fprintf(w, "copy     %s (%s), its work is in the tree: brood tasks prune removes it\n", c.Path, c.Mode)
		}
	}
}

// showResult prints the files a result names and the first lines of its
// summary.
func showResult(w io.Writer, t *dispatch.Task, r *dispatch.Result) {
	id := t.ID
	if len(r.FilesChanged) > 0 {
		fmt.Fprintf(w, "files    %s\n", termsafe.Line(strings.Join(r.FilesChanged, ", ")))
	}
	if r.Error != "" && !isCancelWords(r.Error) && (t.Verdict == nil || t.Verdict.Error != r.Error) {
		// (the verdict's ended line said it already)
		fmt.Fprintf(w, "error    %s\n", termsafe.Line(r.Error))
	}
	status := r.Status
	if t.Status == dispatch.StatusKilled || t.Status == dispatch.StatusCancelled {
		status = t.Status // the parent's account (killed, not the child's cancelled)
	}
	fmt.Fprintf(w, "\nresult (%s):\n", status)
	if strings.TrimSpace(r.Summary) == "" {
		fmt.Fprintln(w, "  (none: it was stopped before it said anything)")
		return
	}
	lines := strings.Split(strings.TrimRight(r.Summary, "\n"), "\n")
	for _, l := range lines[:min(len(lines), excerptLines)] {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if n := len(lines) - excerptLines; n > 0 {
		fmt.Fprintf(w, "  … %d more line(s): brood tasks output %s\n", n, id)
	}
}

// showVerdict is the parent's verdict on the task's last run, and who
// stopped it.
func showVerdict(w io.Writer, t *dispatch.Task) {
	if v := t.Verdict; v != nil {
		fmt.Fprintf(w, "verdict  %s (the parent's)\n", v.Status)
		// Each refusal is said once (newuser P3-4): the ended line has
		// the concerns that rejected the task whole; the lines after it
		// refer to it.
		if v.Rejected != "" && dispatch.Refer(v.Rejected, v.Error, "") == v.Rejected {
			fmt.Fprintf(w, "rejected %s\n", termsafe.Line(v.Rejected))
		}
		if v.Error != "" && !isCancelWords(v.Error) && v.Error != t.Note {
			fmt.Fprintf(w, "ended    %s\n", termsafe.Line(v.Error))
		}
		for _, r := range v.Reasons {
			fmt.Fprintf(w, "reason   %s\n", termsafe.Line(r))
		}
		for _, c := range v.Config {
			fmt.Fprintf(w, "config   %s\n", termsafe.Line(c))
		}
		for _, r := range v.Refs {
			fmt.Fprintf(w, "ref      %s\n", termsafe.Line(r))
		}
		if v.ReadDeny != "" {
			fmt.Fprintf(w, "sandbox  %s\n", termsafe.Line(v.ReadDeny))
		}
	}
	said := ""
	if t.Verdict != nil {
		said = t.Verdict.Error
	}
	for _, c := range concerns(t) {
		fmt.Fprintf(w, "concern  %s\n", termsafe.Line(dispatch.Refer(c, said, "the ended line says why")))
	}
	if k := t.Kill; k != nil {
		fmt.Fprintf(w, "stopped  by the %s (%s) at %s\n", termsafe.Line(k.By), termsafe.Line(k.Via), k.At.Local().Format(time.DateTime))
	} else if why := stoppedBy(t); why != "" {
		fmt.Fprintf(w, "stopped  %s\n", why)
	}
}

// isCancelWords reports whether an error a record holds is Go's word for
// a cancelled run ("context canceled"), which says nothing of who stopped
// it: show says that instead (stoppedBy).
func isCancelWords(s string) bool {
	return strings.Contains(s, context.Canceled.Error())
}

// stoppedBy says what stopped a cancelled task that no brood tasks kill
// stopped, from the records: no verdict means its parent run ended before
// it could judge the task (killed, or its process died); a verdict, that
// the parent stopped it as its run ended (Ctrl-C, or the run's end).
func stoppedBy(t *dispatch.Task) string {
	if t.Status != dispatch.StatusCancelled {
		return ""
	}
	if v := t.Verdict; v != nil && strings.HasPrefix(v.Error, "stopped") {
		// Its parent recorded why (Ctrl-C, a time limit): the note says it.
		return strings.TrimPrefix(termsafe.Line(v.Error), "stopped: ") + ": resume it with brood tasks resume " + t.ID
	}
	if t.Verdict == nil {
		return "its parent run ended before it finished (the parent was killed or died): resume it with brood tasks resume " + t.ID
	}
	return "the parent run stopped it (Ctrl-C, or the parent run ended): resume it with brood tasks resume " + t.ID
}
