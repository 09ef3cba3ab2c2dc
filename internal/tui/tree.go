package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/spend"
)

// node is one dispatch in the subagent tree.
type node struct {
	id, agent, parent string
	depth             int
	background        bool
	status            string // queued/running until the stop event; then the final status
	started, stopped  time.Time
	usage             model.Usage // live while running; the final total once stopped
	model             string      // the model it runs on (from its envelope)
	own               model.Usage // its own tokens, its children's not included (for its cost)
	lastTools         []string    // the latest batch of tool names
	history           [][]string  // every batch, for the expanded view
	summary, errText  string      // from its result, once stopped
	children          []string
}

// tree is every dispatch of the session, nested ones under their parent,
// in the order they started.
type tree struct {
	nodes    map[string]*node
	roots    []string
	cursor   int             // index into visible()
	expanded map[string]bool // nodes showing progress and result
}

func newTree() tree { return tree{nodes: map[string]*node{}, expanded: map[string]bool{}} }

// apply folds one dispatch event into the tree.
func (t *tree) apply(ev delegate.Event, now time.Time) {
	if ev.TaskID == "" {
		return
	}
	n := t.nodes[ev.TaskID]
	if n == nil {
		n = &node{id: ev.TaskID, agent: clean(ev.Agent, false), depth: ev.Depth, status: "running", started: now}
		n.parent = ev.Parent
		if p := t.nodes[n.parent]; p != nil && n.parent != n.id {
			p.children = append(p.children, n.id)
		} else {
			n.parent = ""
			t.roots = append(t.roots, n.id)
		}
		t.nodes[n.id] = n
	}
	switch ev.Type {
	case "dispatch_start":
		n.status, n.started = dispatch.StatusQueued, now // queued.go: running once it starts
	case "progress":
		t.start(n.id, now)
		tools := make([]string, 0, len(ev.Tools))
		for _, s := range ev.Tools {
			tools = append(tools, clean(s, false))
		}
		n.lastTools = tools
		n.history = append(n.history, tools)
	case "usage":
		t.start(n.id, now)
		n.usage, n.own = ev.Usage, ev.Usage // a running child's count is its own
	case "dispatch_stop":
		n.status, n.stopped = clean(ev.Status, false), now
		if ev.Usage.Total() > 0 {
			n.usage = ev.Usage
		}
	case "background_done":
		n.background = true
	}
}

// running counts the dispatches still going.
func (t *tree) running() int {
	c := 0
	for _, n := range t.nodes {
		if n.stopped.IsZero() && n.status != dispatch.StatusQueued {
			c++
		}
	}
	return c
}

// usage sums every dispatch's tokens: the children's share of the status
// line. A finished child's total includes its own children, so only roots
// and running nodes under running parents are counted once each.
func (t *tree) usage() model.Usage {
	var u model.Usage
	var walk func(id string)
	walk = func(id string) {
		n := t.nodes[id]
		u = u.Add(n.usage)
		if !n.stopped.IsZero() {
			return // its total already holds its children's
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, id := range t.roots {
		walk(id)
	}
	return u
}

// visible lists the node ids in display order.
func (t *tree) visible() []string {
	var out []string
	var walk func(id string)
	walk = func(id string) {
		out = append(out, id)
		for _, c := range t.nodes[id].children {
			walk(c)
		}
	}
	for _, id := range t.roots {
		walk(id)
	}
	return out
}

// selected is the id under the cursor ("" if the tree is empty).
func (t *tree) selected() string {
	v := t.visible()
	if len(v) == 0 {
		return ""
	}
	t.cursor = max(0, min(t.cursor, len(v)-1))
	return v[t.cursor]
}

func (t *tree) move(d int) {
	v := t.visible()
	t.cursor = max(0, min(t.cursor+d, len(v)-1))
}

func (t *tree) toggle() {
	if id := t.selected(); id != "" {
		t.expanded[id] = !t.expanded[id]
	}
}

func (t *tree) setResult(r resultMsg) {
	if n := t.nodes[r.id]; n != nil {
		n.summary, n.errText = clean(r.summary, true), clean(r.errText, false)
		if r.model != "" {
			n.model = r.model
		}
		n.own = r.own
	}
}

func (t *tree) setModel(id, m string) {
	if n := t.nodes[id]; n != nil && n.model == "" {
		n.model = m
	}
}

// ledger is every dispatch's own usage per model: the children's share of
// the session's cost.
func (t *tree) ledger() spend.Ledger {
	l := spend.Ledger{}
	for _, n := range t.nodes {
		l.Add(n.model, n.own)
	}
	return l
}

// ids lists every task id, for completion.
func (t *tree) ids() []string { return t.visible() }

// render draws the tree, at most height lines, keeping the cursor in view.
func (t *tree) render(st styles, prices price.Table, width, height int, focused bool, now time.Time) []string {
	v := t.visible()
	if len(v) == 0 {
		return nil
	}
	cur := t.selected()
	var lines []string
	curLine := 0
	for _, id := range v {
		n := t.nodes[id]
		if id == cur {
			curLine = len(lines)
		}
		lines = append(lines, t.line(st, prices, n, width, focused && id == cur, now))
		if t.expanded[id] {
			lines = append(lines, t.details(st, n, width)...)
		}
	}
	if len(lines) <= height {
		return lines
	}
	start := max(0, min(curLine-height/2, len(lines)-height))
	return lines[start : start+height]
}

func (t *tree) line(st styles, prices price.Table, n *node, width int, selected bool, now time.Time) string {
	indent := strings.Repeat("  ", t.level(n))
	mark := "▸"
	if t.expanded[n.id] {
		mark = "▾"
	}
	end := now
	if !n.stopped.IsZero() {
		end = n.stopped
	}
	tokens := n.usage.Input + n.usage.CacheRead + n.usage.Output
	s := fmt.Sprintf("%s%s %s %s %s %s · %s tok", indent, mark, n.agent, shortID(n.id), st.status(n.status), elapsed(end.Sub(n.started)), count(tokens))
	if c := (spend.Ledger{n.model: n.own}).Cost(prices); c.Priced() && n.own != (model.Usage{}) {
		s += " · " + c.String() // its own cost; a model without a price shows tokens only
	}
	if n.background {
		s += " · bg"
	}
	if len(n.lastTools) > 0 {
		s += " · " + strings.Join(n.lastTools, ", ")
	}
	s = truncate(s, width)
	if selected {
		return st.selected.Render(s)
	}
	return s
}

func (t *tree) level(n *node) int {
	l := 0
	for p := n.parent; p != ""; p = t.nodes[p].parent {
		l++
		if l > 32 {
			break
		}
	}
	return l
}

// details is the expanded view: every batch of tools, then the result.
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
		for i, l := range strings.Split(strings.TrimSpace(n.summary), "\n") {
			if i == 8 {
				out = append(out, st.dim.Render(pad+"… (whole result: brood tasks output "+n.id+")"))
				break
			}
			out = append(out, truncate(pad+"│ "+l, width))
		}
	}
	if n.errText != "" {
		out = append(out, truncate(pad+"error: "+n.errText, width))
	}
	return out
}

func elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func count(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%d", n)
}

// finished reports whether status is one a task ends in.
func finished(status string) bool {
	switch status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint, dispatch.StatusFailed, dispatch.StatusKilled, dispatch.StatusCancelled, dispatch.StatusRejected:
		return true
	}
	return false
}
