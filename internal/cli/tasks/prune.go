package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/hooks"
	"github.com/broodhq/brood/internal/termsafe"
)

// PruneOptions are the flags of `brood tasks prune`.
type PruneOptions struct {
	Factory   *cmdutil.Factory
	OlderThan time.Duration
	Force     bool
	JSON      bool
}

// NewCmdPrune builds `brood tasks prune --older-than DURATION`.
func NewCmdPrune(f *cmdutil.Factory, runF func(*PruneOptions) error) *cobra.Command {
	opts := &PruneOptions{Factory: f}
	cmd := &cobra.Command{
		Use: "prune --older-than DURATION",
		Example: `  brood tasks prune --older-than 168h
  brood tasks prune --older-than 24h --json`,
		Short: "Delete the records of finished dispatches older than DURATION",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("older-than") {
				return cmdutil.UsageError("prune needs --older-than, e.g. --older-than 168h (0s prunes every finished task)")
			}
			if runF != nil {
				return runF(opts)
			}
			return pruneRun(opts)
		},
	}
	cmd.Flags().DurationVar(&opts.OlderThan, "older-than", 0, "age of the records to delete (e.g. 72h)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "also delete isolated copies holding work that was never applied")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func pruneRun(opts *PruneOptions) error {
	f := opts.Factory
	older := opts.OlderThan
	if older < 0 {
		return cmdutil.UsageError("--older-than %s is negative", older)
	}
	tasks, err := dispatch.ListTasks(f.ProjectRoot)
	if err != nil {
		return err
	}
	pr := pruning{root: f.ProjectRoot, older: older, force: opts.Force, held: map[string]bool{}, pruned: []string{}}
	for _, t := range tasks {
		if err := pr.task(t); err != nil {
			return err
		}
	}
	pruned, removed, kept := pr.pruned, pr.removed, pr.kept
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, struct {
			Pruned  []string   `json:"pruned"`
			Removed []string   `json:"copies_removed,omitempty"`
			Kept    []keptCopy `json:"copies_kept,omitempty"`
		}{pruned, removed, kept})
	}
	fmt.Fprintf(f.Out, "pruned %d dispatch(es) older than %s\n", len(pruned), older)
	if len(removed) > 0 {
		fmt.Fprintf(f.Out, "removed %d leftover isolated cop(ies)\n", len(removed))
	}
	for _, k := range kept {
		fmt.Fprintf(termsafe.NewWriter(f.Out), "kept %s's copy at %s: it holds work never applied. %s\n", k.TaskID, k.Path, k.Hint)
	}
	return nil
}

// pruning is one `brood tasks prune`'s state across the tasks it looks at.
type pruning struct {
	root    string
	older   time.Duration
	force   bool
	pruned  []string
	removed []string
	kept    []keptCopy
	// held are the task directories a task that stays is nested in: a
	// task nested in another's directory (a subagent's own child) is
	// listed before it (its id is newer), and one that stays keeps every
	// task it is nested in.
	held map[string]bool
}

func (pr *pruning) hold(t *dispatch.Task) {
	for p := t.Files().Parent(); p != nil; p = p.Parent() {
		pr.held[p.Path()] = true
	}
}

// task prunes t if it is finished, old enough, holds no kept copy and no
// task that stays is nested in it.
func (pr *pruning) task(t *dispatch.Task) error {
	if t.Status == dispatch.StatusRunning || t.Status == dispatch.StatusQueued || pr.held[t.Files().Path()] {
		pr.hold(t)
		return nil
	}
	// Leftover copies of finished tasks go, whatever their age, unless
	// they hold work that never reached the tree. Only for a task the
	// root's own records describe: a nested task's owner record is its
	// parent's, a child's to write (where its copy is, is not taken from
	// there).
	top := t.Files().Parent() == nil
	if top {
		r, k, err := sweepCopies(context.Background(), pr.root, t, pr.force)
		if err != nil {
			return err
		}
		pr.removed, pr.kept = append(pr.removed, r...), append(pr.kept, k...)
		if len(k) > 0 {
			pr.hold(t)
			return nil // a kept copy's patch lives in the task's records
		}
	}
	if time.Since(t.Created) < pr.older {
		pr.hold(t)
		return nil
	}
	// Never pull a task from under a process that owns it.
	unlock, err := dispatch.LockDir(t.Files())
	if err != nil {
		pr.hold(t)
		return nil
	}
	err = t.Files().Remove()
	unlock()
	if err != nil {
		return err
	}
	// The root's records by this id are a top-level task's; of a nested
	// one only the record of where it is, when it names it.
	if top {
		dispatch.Records(pr.root).RemoveAll(t.ID)
		hooks.Forget(cmdutil.HookRecords(pr.root), t.ID)
	} else {
		dispatch.Records(pr.root).ForgetWhere(t.Files())
	}
	pr.pruned = append(pr.pruned, t.ID)
	return nil
}
