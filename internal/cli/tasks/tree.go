package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/termsafe"
)

// TreeOptions are the arguments of `brood tasks tree`.
type TreeOptions struct {
	Factory *cmdutil.Factory
	Root    string // a task id, or a session id
	Session string
	JSON    bool
	// Wide prints every node's usage in full (cache reads and writes, its
	// own and its subtree's): a table wider than 80 columns.
	Wide bool
}

// NewCmdTree builds `brood tasks tree [ROOT|--session S]`.
func NewCmdTree(f *cmdutil.Factory, runF func(context.Context, *TreeOptions) error) *cobra.Command {
	opts := &TreeOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "tree [ROOT | --session S]",
		Short: "Show the dispatch tree with each agent's tokens, wall time and estimated cost, rolled up",
		Long: `Show who dispatched whom: each root session (a brood run's transcript) and the
tasks below it, with every node's own tokens (input, output, cache read and
write), wall time and estimated cost, and the same rolled up over its subtree.

Costs come from a price table of list prices per million tokens (override or
extend it under [prices] in settings.toml); a model without a price shows its
tokens only, and a rolled-up cost that leaves such a node out is marked "+".
Without an argument every tree of the project is shown. The table fits 80
columns (a node's description is cut with …; TOKENS and TREE COST are its
subtree's); --wide shows every count, --json everything.`,
		Example: `  brood tasks tree
  brood tasks tree 01JC3V...            # one task and everything below it
  brood tasks tree --session 01JC3T...  # one brood run's whole tree
  brood tasks tree --wide               # every count, own and rolled up
  brood tasks tree --json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: f.CompleteTaskIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Root = args[0]
			}
			if opts.Root != "" && opts.Session != "" {
				return errors.New("give a task id or --session, not both")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return treeRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "the tree of this root session (its transcript's id or path)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.Wide, "wide", false, "show every count (cache, own and rolled up): wider than 80 columns")
	_ = cmd.RegisterFlagCompletionFunc("session", f.CompleteSessionIDs)
	return cmd
}

func treeRun(opts *TreeOptions) error {
	f := opts.Factory
	prices, err := f.Prices()
	if err != nil {
		return err
	}
	tasks, err := dispatch.ListTasks(f.ProjectRoot)
	if err != nil {
		return err
	}
	fo := newForest(f.ProjectRoot, tasks, prices)
	sess := opts.Session
	if sess != "" {
		sess = strings.TrimSuffix(filepath.Base(sess), ".jsonl")
	}
	trees, err := fo.pick(opts.Root, sess)
	if err != nil {
		return err
	}
	for _, n := range trees {
		fo.rollUp(n)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(f.Out, trees)
	}
	if len(trees) == 0 {
		fmt.Fprintln(f.Out, "no dispatches yet in", f.ProjectRoot)
		return nil
	}
	if opts.Wide {
		return writeWideTree(termsafe.NewWriter(f.Out), trees)
	}
	return writeTree(termsafe.NewWriter(f.Out), trees)
}

// pick picks the trees asked for: one task's subtree, one session's, or
// all of them (sessions newest first, then tasks no session claims).
func (fo *forest) pick(root, sess string) ([]*Node, error) {
	bySession := map[string][]*dispatch.Task{}
	var loose []*dispatch.Task
	for _, t := range fo.children[""] {
		if s := fo.sessionOf(t); s != "" {
			bySession[s] = append(bySession[s], t)
		} else {
			loose = append(loose, t)
		}
	}
	if root != "" {
		// A unique prefix of a task or a session id, in any case.
		known := make([]string, 0, len(fo.tasks)+len(bySession))
		for id := range fo.tasks {
			known = append(known, id)
		}
		for id := range bySession {
			known = append(known, id)
		}
		id, err := cmdutil.ResolveID("task or session", root, known)
		if err != nil && !strings.Contains(err.Error(), " is ambiguous") {
			return nil, fmt.Errorf("no task or session %s in %s; see brood tasks --all", root, taskdir.Open(fo.root).StateDir())
		} else if err != nil {
			return nil, err
		}
		root = id
		if t := fo.tasks[root]; t != nil {
			return []*Node{fo.task(t, map[string]bool{})}, nil
		}
		if _, ok := bySession[root]; !ok {
			return nil, fmt.Errorf("no task or session %s under %s: see brood tasks", root, taskdir.Open(fo.root).StateDir())
		}
		sess = root
	}
	if sess != "" {
		ids := make([]string, 0, len(bySession))
		for id := range bySession {
			ids = append(ids, id)
		}
		if id, err := cmdutil.ResolveID("session", sess, ids); err == nil {
			sess = id
		}
		return []*Node{fo.session(sess, bySession[sess])}, nil
	}
	ids := make([]string, 0, len(bySession))
	for s := range bySession {
		ids = append(ids, s)
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	var out []*Node
	for _, s := range ids {
		out = append(out, fo.session(s, bySession[s]))
	}
	for _, t := range loose {
		out = append(out, fo.task(t, map[string]bool{}))
	}
	return out, nil
}

// writeWideTree is the full table: every node's own and rolled-up counts.
func writeWideTree(out io.Writer, trees []*Node) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tSTATUS\tIN\tOUT\tCACHE R\tCACHE W\tWALL\tCOST\tTREE IN\tTREE OUT\tTREE CACHE R\tTREE CACHE W\tTREE COST\t")
	partial, assumed := false, false
	for n, indent := range rows(trees) {
		label := indent + n.Agent + " " + n.ID
		if n.Kind == "session" {
			label += " (session)"
		}
		cost := "-"
		if n.CostUSD != nil {
			cost = usd(*n.CostUSD)
			if n.PriceNote != "" && strings.HasPrefix(n.PriceNote, "assumed") {
				cost += "*"
				assumed = true
			}
		}
		tree, part := treeCost(n)
		partial = partial || part
		u, t := n.Usage, n.TreeUsage
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t\n", label, n.Status,
			u.Input, u.Output, u.CacheRead, u.CacheWrite, dur(n.WallMS), cost, t.Input, t.Output, t.CacheRead, t.CacheWrite, tree)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return costNotes(out, partial, assumed)
}

// rows walks the trees depth first: each node with the indent that draws
// its branch (├─, └─ and the │ of its ancestors' open branches).
func rows(trees []*Node) iter.Seq2[*Node, string] {
	return func(yield func(*Node, string) bool) {
		var walk func(n *Node, prefix, branch string) bool
		walk = func(n *Node, prefix, branch string) bool {
			if !yield(n, prefix+branch) {
				return false
			}
			next := prefix
			switch branch {
			case "├─ ":
				next += "│  "
			case "└─ ":
				next += "   "
			}
			for i, c := range n.Children {
				b := "├─ "
				if i == len(n.Children)-1 {
					b = "└─ "
				}
				if !walk(c, next, b) {
					return false
				}
			}
			return true
		}
		for _, n := range trees {
			if !walk(n, "", "") {
				return
			}
		}
	}
}

// treeCost is a subtree's cost as printed: "-" when nothing below had a
// price, a trailing + when some did not; partial says either.
func treeCost(n *Node) (cost string, partial bool) {
	switch {
	case !n.TreeCostComplete && n.TreeCostUSD == 0:
		return "-", true
	case !n.TreeCostComplete:
		return usd(n.TreeCostUSD) + "+", true
	}
	return usd(n.TreeCostUSD), false
}

// costNotes explains the marks on costs.
func costNotes(out io.Writer, partial, assumed bool) error {
	if partial {
		fmt.Fprintln(out, "- no price; + a sum leaving out models without one (their tokens count):\n  price them under [prices] in settings.toml")
	}
	if assumed {
		fmt.Fprintln(out, "* an assumed price (brood's table): set yours under [prices] in settings.toml")
	}
	return nil
}

func usd(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}

func dur(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}
