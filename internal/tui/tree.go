package tui

import (
	"fmt"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spend"
)

// node is one dispatch in the subagent tree.
type node struct {
	id, agent, parent string
	desc              string // what it was asked to do (the Task call's description)
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

// tree is every dispatch of the session, nested ones under their parent;
// it is shown asking, running and queued first (treeview.go).
type tree struct {
	nodes    map[string]*node
	roots    []string        // in the order they started
	cur      string          // the id under the cursor
	top      int             // the first line shown, when scrolled
	follow   bool            // the view follows the cursor (false after PgUp/PgDn)
	expanded map[string]bool // nodes showing progress and result
	asking   map[string]bool // tasks with a question waiting, and those it came through
}

func newTree() tree { return tree{nodes: map[string]*node{}, expanded: map[string]bool{}} }

// apply folds one dispatch event into the tree.
func (t *tree) apply(ev spawn.Event, now time.Time) {
	if ev.TaskID == "" {
		return
	}
	n := t.nodes[ev.TaskID]
	if n == nil {
		n = &node{id: ev.TaskID, agent: clean(ev.Agent, false), desc: firstLine(ev.Description, 100), depth: ev.Depth, status: "running", started: now}
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
		if d := firstLine(ev.Description, 100); d != "" {
			n.desc = d
		}
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

func (t *tree) setResult(r resultMsg) {
	if n := t.nodes[r.id]; n != nil {
		n.summary, n.errText = clean(r.summary, true), clean(r.errText, false)
		if n.desc == "" {
			n.desc = firstLine(r.desc, 100)
		}
		if r.model != "" {
			n.model = r.model
		}
		n.own = r.own
	}
}

func (t *tree) setModel(id, m, desc string) {
	n := t.nodes[id]
	if n == nil {
		return
	}
	if n.model == "" {
		n.model = m
	}
	if n.desc == "" {
		n.desc = firstLine(desc, 100)
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
