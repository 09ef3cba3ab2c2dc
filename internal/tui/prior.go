package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spend"
)

// priorMsg carries a reopened session's earlier tasks, read from the
// records: the root dispatched them in an earlier run of brood.
type priorMsg struct{ nodes []*node }

// loadPrior reads the tasks the session's root dispatched before (the top
// ones name the session in their owner records, as brood tasks tree
// --session finds them) and every task below them, for the tree, so a
// reopened session's tokens and cost include its subagents'.
func (e *engine) loadPrior(sessionID string) {
	all, err := dispatch.ListTasks(e.cfg.ProjectRoot)
	if err != nil {
		return
	}
	// The session is the root's claim, from the project's own owner
	// records (a child's records can name any session).
	ownedBy := func(t *dispatch.Task) bool {
		var o dispatch.Owner
		err := dispatch.ReadJSON(dispatch.OwnerPath(dispatch.OwnersDir(e.cfg.ProjectRoot), t.ID), &o)
		return err == nil && o.TaskID == t.ID && o.Session == sessionID && o.ParentTaskID == ""
	}
	if nodes := priorNodes(all, ownedBy); len(nodes) > 0 {
		e.send(priorMsg{nodes: nodes})
	}
}

// priorNodes builds the finished nodes of the session's tasks (the top
// ones are those top reports), a parent
// before its children, in the order they started. A task's usage is its
// subtree's, as a finished node's is; its own is its result's.
func priorNodes(all []*dispatch.Task, top func(*dispatch.Task) bool) []*node {
	below := map[string][]*dispatch.Task{}
	var tops []*dispatch.Task
	for _, t := range all {
		if t.Owner != nil && t.Owner.ParentTaskID == "" && top(t) {
			tops = append(tops, t)
		}
		if t.Parent != "" {
			below[t.Parent] = append(below[t.Parent], t)
		}
	}
	byID := func(a, b *dispatch.Task) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(tops, byID)
	var out []*node
	seen := map[string]bool{}
	var walk func(t *dispatch.Task, parent string) model.Usage
	walk = func(t *dispatch.Task, parent string) model.Usage {
		seen[t.ID] = true
		n := priorNode(t, parent)
		out = append(out, n)
		kids := below[t.ID]
		slices.SortFunc(kids, byID)
		for _, c := range kids {
			if !seen[c.ID] {
				n.usage = n.usage.Add(walk(c, t.ID))
			}
		}
		return n.usage
	}
	for _, t := range tops {
		if !seen[t.ID] {
			walk(t, "")
		}
	}
	return out
}

// priorNode is one earlier task as the tree shows a finished one. It is
// stopped whatever its records say: nothing of this process runs it.
func priorNode(t *dispatch.Task, parent string) *node {
	n := &node{id: t.ID, agent: clean(t.Agent, false), desc: firstLine(t.Label, 100), parent: parent, depth: t.Depth, status: clean(t.Status, false),
		started: t.Created, model: spend.TaskModel(t), own: spend.TaskUsage(t)}
	if t.Log != nil && !t.Log.Started.IsZero() {
		n.started = t.Log.Started
	}
	n.stopped = n.started.Add(time.Duration(t.Duration) * time.Millisecond)
	if t.Log != nil && t.Log.Finished.After(n.started) {
		n.stopped = t.Log.Finished
	}
	if t.Envelope != nil {
		n.background = t.Envelope.Background
	}
	if t.Result != nil {
		n.summary, n.errText = clean(t.Result.Summary, true), clean(t.Result.Error, false)
	}
	n.usage = n.own
	return n
}

// addPrior puts a reopened session's earlier tasks into the tree, before
// the ones this run started; a task already there is left as it is.
func (t *tree) addPrior(nodes []*node) {
	var roots []string
	for _, n := range nodes {
		if t.nodes[n.id] != nil {
			continue
		}
		if p := t.nodes[n.parent]; p != nil && n.parent != "" {
			p.children = append(p.children, n.id)
		} else {
			n.parent = ""
			roots = append(roots, n.id)
		}
		t.nodes[n.id] = n
	}
	t.roots = append(roots, t.roots...)
}
