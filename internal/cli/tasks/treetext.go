package tasks

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/termsafe"
)

// The columns of the 80-column tree: NODE is cut to fit, the others are
// fixed.
const (
	nodeWidth   = 42
	treeColumns = "%-42s %-10s %7s %7s %9s\n"
)

// writeTree prints the trees in 80 columns: each node's agent, id (its
// shortest unique prefix) and description, cut with …; its status; its
// subtree's tokens and estimated cost; its own wall time.
func writeTree(out io.Writer, trees []*Node) error {
	var ids []string
	for n := range rows(trees) {
		ids = append(ids, n.ID)
	}
	var b strings.Builder
	fmt.Fprintf(&b, treeColumns, "NODE", "STATUS", "TOKENS", "WALL", "TREE COST")
	partial, assumed := false, false
	for n, indent := range rows(trees) {
		label := indent + termsafe.Line(n.Agent) + " " + shortid.Prefix(n.ID, ids)
		if n.Kind == "session" {
			label += " (session)"
		} else if d := termsafe.Line(n.Description); d != "" {
			label += "  " + d
		}
		cost, part := treeCost(n)
		partial = partial || part
		if n.PriceNote != "" && strings.HasPrefix(n.PriceNote, "assumed") {
			assumed = true
		}
		t := n.TreeUsage
		fmt.Fprintf(&b, treeColumns, clip(label, nodeWidth), n.Status, count(t.Input+t.Output+t.CacheRead+t.CacheWrite), dur(n.WallMS), cost)
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return err
	}
	return costNotes(out, partial, assumed)
}

// clip cuts s to width characters, the last one "…" when cut, and pads
// it to width (fmt pads by bytes, and the tree's lines are not ASCII).
func clip(s string, width int) string {
	n := utf8.RuneCountInString(s)
	if n > width {
		r := []rune(s)
		return string(r[:width-1]) + "…"
	}
	return s + strings.Repeat(" ", width-n)
}

// count is a token count in at most seven characters.
func count(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 100_000:
		return fmt.Sprintf("%dk", n/1000)
	case n >= 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}
