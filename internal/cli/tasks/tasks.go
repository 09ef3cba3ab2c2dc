// Package tasks is `brood tasks`: list, inspect, resume, steer, kill and
// prune the records of subagent dispatches under .brood/dispatch/.
package tasks

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/termsafe"
)

// ListOptions are the flags of `brood tasks`.
type ListOptions struct {
	Factory *cmdutil.Factory
	JSON    bool
	Status  string
	// All lists every task; otherwise the table shows the newest Last.
	All  bool
	Last int
	// Fleet, when configured (--temporal or temporal.address), adds the
	// fleet's calls and runs below this project's tasks.
	Fleet root.FleetFlags
}

// NewCmdTasks builds `brood tasks` (which lists) and its verbs. runF
// replaces the listing.
func NewCmdTasks(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List, inspect, resume and steer subagent dispatches",
		Long: `Every dispatch is recorded under .brood/dispatch/<task_id>/ (envelope, transcript,
result, process outcome, dispatch log). ` + "`brood tasks`" + ` lists them with their true
status: a child whose process died without a result shows as killed, and can be
resumed. The table shows the newest 20 (--last N, or --all) and says how many
it hides; --json lists every one. An id is shown as its shortest unique prefix;
every verb takes any unique prefix or tail of an id, or a unique part of at
least six characters (the tail of a shown id is one).

With a fleet (--temporal HOST:PORT or temporal.address), it then lists the
fleet's calls and runs on its task queue (brood subagent and brood workflow
run --engine temporal), with their status there: queued (and why), running
on which worker, done; --json marks them "fleet": "temporal". show, resume
and brood workflow cancel take a fleet id too; output, log, kill and send
are this machine's dispatches only.`,
		Example: `  brood tasks
  brood tasks --status running
  brood tasks --all --json | jq -r '.[].id'
  brood tasks --temporal 127.0.0.1:7233   # this machine's, then the fleet's calls and runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	opts.Fleet.AddFlags(cmd)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.All, "all", false, "list every task, not only the newest --last")
	cmd.Flags().IntVarP(&opts.Last, "last", "n", defaultWindow, "how many of the newest tasks the table shows")
	cmd.Flags().StringVar(&opts.Status, "status", "", "only tasks with this status (queued, running, done, not-applied, partial, checkpoint, failed, killed, cancelled)")
	cmd.AddCommand(
		NewCmdShow(f, nil), NewCmdLog(f, nil), NewCmdPrune(f, nil),
		NewCmdOutput(f, nil), NewCmdResume(f, nil), NewCmdKill(f, nil), NewCmdSend(f, nil), NewCmdTree(f, nil),
	)
	return cmd
}

// defaultWindow is how many of the newest tasks `brood tasks` shows
// without --all.
const defaultWindow = 20

func listRun(ctx context.Context, opts *ListOptions) error {
	f := opts.Factory
	status := opts.Status
	if opts.Last < 1 {
		return fmt.Errorf("--last %d: want 1 or more (or --all)", opts.Last)
	}
	if status != "" && !knownStatus(status) {
		return fmt.Errorf("--status %q: want one of queued, running, done, not-applied, partial, checkpoint, failed, killed, cancelled", status)
	}
	tasks, unsealed, err := dispatch.ListTasksSealed(f.ProjectRoot)
	if err != nil {
		return err
	}
	if unsealed > 0 {
		fmt.Fprintf(f.Err, "brood: %d task record(s) in %s carry no seal made with your record key (%s): not listed, not resumable. They were made by a brood with another HOME or XDG_STATE_HOME (another key), by a brood from before records were sealed, by another user, or shipped by the repository; docs/trust.md, \"Records a repository ships\"\n", unsealed, filepath.Join(f.ProjectRoot, ".brood", "records"), filepath.Join(taskdir.StateBase(), taskdir.RecordKeyName))
	}
	all := make([]string, 0, len(tasks))
	for _, t := range tasks {
		all = append(all, t.ID)
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
	if opts.JSON {
		rows := make([]taskRow, 0, len(tasks))
		for _, t := range tasks {
			rows = append(rows, newTaskRow(t))
		}
		return cmdutil.WriteJSON(f.Out, append(rows, fleetRows(ctx, opts, status)...))
	}
	hidden := 0
	if !opts.All && len(tasks) > opts.Last {
		tasks, hidden = tasks[:opts.Last], len(tasks)-opts.Last
	}
	if unsealed > 0 && len(tasks) == 0 && status == "" {
		fmt.Fprintln(f.Out, "no task of yours in", dispatch.Root(f.ProjectRoot))
	} else if err := printTasks(f, tasks, all, status); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(f.Err, "(%d older task(s) not shown: brood tasks --all lists every one)\n", hidden)
	}
	if !opts.Fleet.Configured(f) {
		return nil
	}
	return printFleet(ctx, opts, status)
}

// printFleet lists the fleet's calls and runs after the local tasks; a
// fleet that does not answer is said on stderr.
func printFleet(ctx context.Context, opts *ListOptions, status string) error {
	f := opts.Factory
	fleet, err := fleetCalls(ctx, opts)
	if err != nil {
		fmt.Fprintf(f.Err, "brood: the fleet's tasks are not listed: %v\n", err)
		return nil
	}
	fmt.Fprintln(f.Out, "\non the fleet (Temporal):")
	tw := tabwriter.NewWriter(termsafe.NewWriter(f.Out), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tAGENT\tSTATUS\tAGE\tDESCRIPTION")
	n, unchecked := 0, false
	for _, t := range fleet {
		if status != "" && !statusIs(t.Status, status) {
			continue
		}
		n++
		st := termsafe.Line(t.Status)
		if t.Unchecked {
			st, unchecked = st+" (unchecked)", true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.Line(t.ID), t.Kind, termsafe.Line(t.Agent), st, cmdutil.Age(t.Created), termsafe.Line(cmdutil.TrimTo(t.Description, 70)))
	}
	if n == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unchecked {
		fmt.Fprintln(f.Out, uncheckedWord)
	}
	return nil
}

// uncheckedWord says what an ended fleet task's "(unchecked)" status is.
const uncheckedWord = "(unchecked): the status as the task's workflow reported it on Temporal, which whoever completed its workflow tasks writes; brood tasks show ID (a call) or brood workflow show ID (a run) checks it"

// fleetRows are the fleet's calls and runs as --json rows ("fleet":
// "temporal"); a fleet that does not answer is said on stderr.
func fleetRows(ctx context.Context, opts *ListOptions, status string) []taskRow {
	f := opts.Factory
	fleet, err := fleetCalls(ctx, opts)
	if err != nil {
		fmt.Fprintf(f.Err, "brood: the fleet's tasks are not listed: %v\n", err)
		return nil
	}
	var rows []taskRow
	for _, t := range fleet {
		if status == "" || statusIs(t.Status, status) {
			rows = append(rows, taskRow{ID: t.ID, Agent: t.Agent, Status: t.Status, Description: t.Description,
				Trust: "unjudged", Created: t.Created, Fleet: "temporal", Kind: t.Kind, Unchecked: t.Unchecked})
		}
	}
	return rows
}

// fleetCalls are the fleet's calls and runs, or none when no fleet is
// configured.
func fleetCalls(ctx context.Context, opts *ListOptions) ([]cmdutil.FleetCall, error) {
	f := opts.Factory
	if !opts.Fleet.Configured(f) {
		return nil, nil
	}
	link, err := f.FleetLink()
	if err != nil {
		return nil, err
	}
	return link.Calls(ctx, f, opts.Fleet)
}

// printTasks is the table of this project's tasks, each id shown as its
// shortest unique prefix among all (every id of the project).
func printTasks(f *cmdutil.Factory, tasks []*dispatch.Task, all []string, status string) error {
	if len(tasks) == 0 {
		if status != "" {
			fmt.Fprintf(f.Out, "no tasks with status %s in %s\n", status, dispatch.Root(f.ProjectRoot))
		} else {
			fmt.Fprintln(f.Out, "no dispatches yet in", dispatch.Root(f.ProjectRoot))
		}
		return nil
	}
	tw := tabwriter.NewWriter(termsafe.NewWriter(f.Out), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tAGE\tDURATION\tTOKENS\tDESCRIPTION")
	for _, t := range tasks {
		desc := t.Label
		if t.Note != "" {
			desc += " (" + t.Note + ")"
		}
		if t.Status != dispatch.StatusRunning && t.Status != dispatch.StatusQueued {
			if copies, _ := isolate.Leftovers(context.Background(), copyRepo(f.ProjectRoot, t), t.ID, t.Files().Path()); unappliedCount(copies) > 0 {
				desc += " [unapplied copy kept: brood tasks show " + shortid.Prefix(t.ID, all) + "]"
			}
		}
		if n := len(concerns(t)); n > 0 {
			desc = fmt.Sprintf("%s [%d concern(s)]", desc, n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", termsafe.Line(shortid.Prefix(t.ID, all)), termsafe.Line(t.Agent), t.Status, cmdutil.Age(t.Created), cmdutil.Dur(t.Duration), t.Tokens, termsafe.Line(cmdutil.TrimTo(desc, 70)))
	}
	return tw.Flush()
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
	Trust       string     `json:"trust"` // accepted | rejected | unjudged (the parent's verdict)
	Created     time.Time  `json:"created"`
	DurationMS  int64      `json:"duration_ms,omitempty"`
	Tokens      int64      `json:"tokens"`
	Depth       int        `json:"depth"`
	Parent      string     `json:"parent_task_id,omitempty"`
	Concerns    []string   `json:"concerns,omitempty"` // the parent's edge guardrails' findings
	Result      *rowResult `json:"result,omitempty"`
	// Fleet is "temporal" for a call or run on the fleet (no local
	// records: brood tasks show ID asks the fleet), Kind call or plan.
	Fleet string `json:"fleet,omitempty"`
	Kind  string `json:"kind,omitempty"`
	// Unchecked: a fleet task's status as its workflow reported it on
	// Temporal (FleetCall.Unchecked).
	Unchecked bool `json:"status_unchecked,omitempty"`
}

// rowResult is the part of result.json a listing needs.
type rowResult struct {
	Status       string      `json:"status"`
	Usage        model.Usage `json:"usage"`
	ChildUsage   model.Usage `json:"child_usage"`
	ResumeHandle string      `json:"resume_handle,omitempty"`
}

func newTaskRow(t *dispatch.Task) taskRow {
	r := taskRow{ID: t.ID, Dir: t.Dir, Agent: t.Agent, Status: t.Status, Description: t.Label, Note: t.Note, Trust: t.Trust, Created: t.Created,
		DurationMS: t.Duration, Tokens: t.Tokens, Depth: t.Depth, Parent: t.Parent, Concerns: concerns(t)}
	if t.Result != nil {
		r.Result = &rowResult{Status: t.Result.Status, Usage: t.Result.Usage, ChildUsage: t.Result.ChildUsage, ResumeHandle: t.Result.ResumeHandle}
	}
	return r
}

// statusIs: a fleet task's status is want, bare or with why in
// parentheses ("queued (no worker is polling task queue q)").
func statusIs(status, want string) bool {
	word, _, _ := strings.Cut(status, " (")
	return strings.EqualFold(word, want)
}

func knownStatus(s string) bool {
	s = strings.ToLower(s)
	return dispatch.ValidStatus(s) || s == dispatch.StatusRunning || s == dispatch.StatusQueued || s == dispatch.StatusNotApplied
}

// concerns are what the parent's edge guardrails found in the task's last
// run (its verdict): the status stands, but a person should check these.
func concerns(t *dispatch.Task) []string {
	if t.Verdict == nil {
		return nil
	}
	return t.Verdict.Concerns
}

func unappliedCount(copies []isolate.Copy) int {
	n := 0
	for _, c := range copies {
		if c.Unapplied {
			n++
		}
	}
	return n
}

// taskVerb completes and resolves the task id every verb over one task
// takes first (a unique prefix, tail or part of an id of this project's tasks):
// run gets the whole id and the arguments after it.
func taskVerb(f *cmdutil.Factory, cmd *cobra.Command, run func(ctx context.Context, id string, args []string) error) {
	cmd.ValidArgsFunction = f.CompleteTaskIDs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		id, err := f.ResolveTaskID(args[0])
		if err != nil {
			return notLocal(f, args[0], err)
		}
		return run(c.Context(), id, args[1:])
	}
}

// notLocal is a verb's error for an id that is none of this project's
// tasks: a fleet call's (or a plan call's) is not kept here, and the line
// says which verbs take one.
func notLocal(f *cmdutil.Factory, q string, err error) error {
	if strings.Contains(err.Error(), " is ambiguous ") {
		return err
	}
	q = strings.TrimSpace(q)
	return fmt.Errorf("no task %s under %s (%s%s; a fleet task is not kept here: brood tasks show %s prints it, brood workflow cancel %s stops it, brood tasks resume %s continues it)",
		q, dispatch.Root(f.ProjectRoot), f.DidYouMean(q), f.LocalTasksHint(), q, q, q)
}

// notHereNorFleet is the error of an id looked up in this project and on
// the fleet, found in neither: it names both places and what lists
// their ids (a plan's calls are listed by its run, not by brood tasks).
func notHereNorFleet(f *cmdutil.Factory, fleet cmdutil.FleetFlags, q string) error {
	q = strings.TrimSpace(q)
	return fmt.Errorf("no task %s under %s nor on the fleet (%s): %s, brood tasks lists the fleet's calls and plan runs under \"on the fleet\", brood workflow show RUN_ID a plan's calls",
		q, dispatch.Root(f.ProjectRoot), fleet.Where(f), f.LocalTasksHint())
}
