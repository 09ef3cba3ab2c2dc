package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/spend"
)

// The tree shows what needs the person first: a task asking a question
// (and the tasks its question came through), then the running ones, the
// queued ones, and last the finished ones; each group in the order they
// started, nested tasks under their parent. When it has more lines than
// its share of the screen it scrolls, and says how many tasks are out of
// view.

// Ranks, in the order the tree shows them.
const (
	rankAsking = iota
	rankRunning
	rankQueued
	rankFinished
)

// rank is where a task goes: the most urgent of itself and its subtree (a
// finished parent whose child is running is shown among the running).
func (t *tree) rank(id string, depth int) int {
	n := t.nodes[id]
	r := rankFinished
	switch {
	case t.asking[id]:
		return rankAsking
	case n.stopped.IsZero() && n.status == dispatch.StatusQueued:
		r = rankQueued
	case n.stopped.IsZero():
		r = rankRunning
	}
	if depth > 32 {
		return r
	}
	for _, c := range n.children {
		r = min(r, t.rank(c, depth+1))
	}
	return r
}

// ordered is ids sorted by rank, keeping their start order within a rank.
func (t *tree) ordered(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b string) int { return t.rank(a, 0) - t.rank(b, 0) })
	return out
}

// visible lists the node ids in display order.
func (t *tree) visible() []string {
	var out []string
	var walk func(id string, depth int)
	walk = func(id string, depth int) {
		out = append(out, id)
		if depth > 32 {
			return
		}
		for _, c := range t.ordered(t.nodes[id].children) {
			walk(c, depth+1)
		}
	}
	for _, id := range t.ordered(t.roots) {
		walk(id, 0)
	}
	return out
}

// selected is the id under the cursor ("" if the tree is empty): the task
// chosen, wherever the order has moved it, or the first one.
func (t *tree) selected() string {
	v := t.visible()
	if len(v) == 0 {
		return ""
	}
	if !slices.Contains(v, t.cur) {
		t.cur = v[0]
	}
	return t.cur
}

func (t *tree) move(d int) {
	v := t.visible()
	if len(v) == 0 {
		return
	}
	i := slices.Index(v, t.selected())
	t.cur = v[max(0, min(i+d, len(v)-1))]
	t.follow = true
}

// page scrolls the view by d lines (an expanded result is read this way).
func (t *tree) page(d int) {
	t.top = max(0, t.top+d)
	t.follow = false
}

func (t *tree) toggle() {
	if id := t.selected(); id != "" {
		t.expanded[id] = !t.expanded[id]
		t.follow = true
	}
}

// dropFinished removes the tasks that have ended and have nothing running
// below them (/clear); their records stay (brood tasks).
func (t *tree) dropFinished() {
	keep := func(id string) bool { return t.rank(id, 0) != rankFinished }
	var prune func(ids []string) []string
	prune = func(ids []string) []string {
		var out []string
		for _, id := range ids {
			if keep(id) {
				t.nodes[id].children = prune(t.nodes[id].children)
				out = append(out, id)
				continue
			}
			t.drop(id)
		}
		return out
	}
	t.roots = prune(t.roots)
	t.top = 0
}

func (t *tree) drop(id string) {
	n := t.nodes[id]
	if n == nil {
		return
	}
	for _, c := range n.children {
		t.drop(c)
	}
	delete(t.nodes, id)
	delete(t.expanded, id)
}

// treeLine is one line of the tree and the task it belongs to.
type treeLine struct {
	id   string
	head bool // the task's own row (not its details)
	text string
}

// treeView is what render needs besides the tree.
type treeView struct {
	st      styles
	prices  price.Table
	width   int
	height  int
	focused bool
	now     time.Time
}

// render draws the tree in at most v.height lines: the top of the order
// when it is not focused (what asks and runs is first), the cursor's part
// when it is, with a line saying how many tasks are out of view.
func (t *tree) render(v treeView) []string {
	ids := t.visible()
	if len(ids) == 0 {
		return nil
	}
	cur := t.selected()
	var all []treeLine
	curLine := 0
	for _, id := range ids {
		n := t.nodes[id]
		if id == cur {
			curLine = len(all)
		}
		all = append(all, treeLine{id: id, head: true, text: t.line(v, n, v.focused && id == cur)})
		if t.expanded[id] {
			for _, d := range t.details(v.st, n, v.width) {
				all = append(all, treeLine{id: id, text: d})
			}
		}
	}
	if len(all) <= v.height {
		t.top = 0
		return texts(all)
	}
	h := max(1, v.height-2) // room for a line above and one below
	switch {
	case !v.focused || len(t.asking) > 0:
		t.top = 0 // the top of the order: what asks and runs
	case t.follow && curLine < t.top:
		t.top = curLine
	case t.follow && curLine >= t.top+h:
		t.top = curLine - h + 1
	}
	t.top = max(0, min(t.top, len(all)-h))
	if t.top > 0 && len(all)-t.top < v.height-1 {
		t.top = len(all) - (v.height - 1) // at the end: only the line above is needed
	}
	// The window: a line for what is above, if anything is, and one for
	// what is below, if anything is.
	h = v.height
	if t.top > 0 {
		h--
	}
	if len(all)-t.top > h {
		h--
	}
	h = max(1, min(h, len(all)-t.top))
	var out []string
	if above := heads(all[:t.top]); t.top > 0 {
		out = append(out, v.st.dim.Render(fmt.Sprintf("  ↑ %d more above", above)))
	}
	out = append(out, texts(all[t.top:t.top+h])...)
	if rest := all[t.top+h:]; len(rest) > 0 {
		hint := "(Ctrl-T, then ↑↓ or PgUp/PgDn)"
		if v.focused {
			hint = "(↓ or PgDn)"
		}
		if n := heads(rest); n == 0 {
			out = append(out, v.st.dim.Render(fmt.Sprintf("  ↓ %d more lines %s", len(rest), hint)))
		} else {
			out = append(out, v.st.dim.Render(fmt.Sprintf("  ↓ %d more %s", n, hint)))
		}
	}
	return out
}

func texts(ls []treeLine) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return out
}

// heads counts the tasks whose row is among ls.
func heads(ls []treeLine) int {
	c := 0
	for _, l := range ls {
		if l.head {
			c++
		}
	}
	return c
}

// line is a task's row: agent, id tail, what it was asked to do, status,
// time, tokens, cost, and its latest tools.
func (t *tree) line(v treeView, n *node, selected bool) string {
	indent := strings.Repeat("  ", t.level(n))
	mark := "▸"
	if t.expanded[n.id] {
		mark = "▾"
	}
	end := v.now
	if !n.stopped.IsZero() {
		end = n.stopped
	}
	status := n.status
	if t.asking[n.id] {
		status = "asking"
	}
	s := fmt.Sprintf("%s%s %s %s %s %s", indent, mark, n.agent, shortID(n.id), v.st.status(status), elapsed(end.Sub(n.started)))
	if n.desc != "" {
		s += " · " + n.desc
	}
	tokens := n.usage.Input + n.usage.CacheRead + n.usage.Output
	s += fmt.Sprintf(" · %s tok", count(tokens))
	if c := (spend.Ledger{n.model: n.own}).Cost(v.prices); c.Priced() && n.own != (model.Usage{}) {
		s += " · " + c.String() // its own cost; a model without a price shows tokens only
	}
	if n.background {
		s += " · bg"
	}
	if len(n.lastTools) > 0 {
		s += " · " + strings.Join(n.lastTools, ", ")
	}
	s = truncate(s, v.width)
	if selected {
		return v.st.selected.Render(s)
	}
	return s
}

// details is the expanded view: every batch of tools, then the whole
// result wrapped to the window (the tree scrolls to read it).
func (t *tree) details(st styles, n *node, width int) []string {
	pad := strings.Repeat("  ", t.level(n)+2)
	var out []string
	for i, b := range n.history {
		out = append(out, truncate(fmt.Sprintf("%s%d. %s", pad, i+1, strings.Join(b, ", ")), width))
	}
	switch {
	case n.stopped.IsZero():
		out = append(out, st.dim.Render(pad+"(running; its result appears here when it stops)"))
	case n.summary != "":
		for _, l := range strings.Split(strings.TrimSpace(n.summary), "\n") {
			for _, w := range wrapLines(l, max(10, width-len(pad)-2)) {
				out = append(out, pad+"│ "+w)
			}
		}
	}
	if n.errText != "" {
		for _, w := range wrapLines("error: "+n.errText, max(10, width-len(pad))) {
			out = append(out, pad+w)
		}
	}
	return out
}
