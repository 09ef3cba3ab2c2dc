package tasks

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// Node is one agent of a dispatch tree: a root session or a task, with its
// own usage and the usage of everything below it rolled up.
type Node struct {
	Kind        string      `json:"kind"` // session | task
	ID          string      `json:"id"`
	Agent       string      `json:"agent"`
	Status      string      `json:"status"`
	Description string      `json:"description,omitempty"`
	Model       string      `json:"model,omitempty"`
	Depth       int         `json:"depth"`
	Usage       model.Usage `json:"usage"`
	WallMS      int64       `json:"wall_ms"`
	// CostUSD is the node's own estimated cost; null when its model has no
	// price (tokens only).
	CostUSD   *float64 `json:"cost_usd"`
	PriceNote string   `json:"price_note,omitempty"`
	// Tree* roll up the node and everything below it. TreeCostUSD adds the
	// priced nodes only; TreeCostComplete says whether every node had one.
	TreeUsage        model.Usage `json:"tree_usage"`
	TreeCostUSD      float64     `json:"tree_cost_usd"`
	TreeCostComplete bool        `json:"tree_cost_complete"`
	Children         []*Node     `json:"children"`
}

// forest is every task of the project, indexed for building trees.
type forest struct {
	root     string
	tasks    map[string]*dispatch.Task
	children map[string][]*dispatch.Task // parent task id → its tasks
	prices   price.Table
}

func newForest(projectRoot string, tasks []*dispatch.Task, prices price.Table) *forest {
	fo := &forest{root: projectRoot, tasks: map[string]*dispatch.Task{}, children: map[string][]*dispatch.Task{}, prices: prices}
	for _, t := range tasks {
		fo.tasks[t.ID] = t
	}
	for _, t := range tasks {
		p := t.Parent
		if p != "" && fo.tasks[p] == nil {
			p = "" // its parent's records are gone: show it at the top
		}
		fo.children[p] = append(fo.children[p], t)
	}
	for _, c := range fo.children {
		slices.SortFunc(c, func(a, b *dispatch.Task) int { return strings.Compare(a.ID, b.ID) })
	}
	return fo
}

// sessionOf is the root session that dispatched a top-level task, from the
// root's own owner record ("" when it does not say).
func (fo *forest) sessionOf(t *dispatch.Task) string {
	var o dispatch.Owner
	if dispatch.ReadJSON(dispatch.OwnerPath(dispatch.OwnersDir(fo.root), t.ID), &o) != nil || o.TaskID != t.ID {
		return ""
	}
	return o.Session
}

// task builds the node of t and, below it, its descendants (a cycle in
// the records is cut).
func (fo *forest) task(t *dispatch.Task, seen map[string]bool) *Node {
	seen[t.ID] = true
	n := &Node{Kind: "task", ID: t.ID, Agent: t.Agent, Status: t.Status, Description: t.Label, Depth: t.Depth, WallMS: t.Duration}
	if t.Envelope != nil {
		n.Model = t.Envelope.Model
	}
	if t.Result != nil {
		n.Usage = t.Result.Usage
	}
	if n.WallMS == 0 && t.Log != nil && !t.Log.Started.IsZero() && !t.Log.Finished.IsZero() {
		n.WallMS = t.Log.Finished.Sub(t.Log.Started).Milliseconds()
	}
	for _, c := range fo.children[t.ID] {
		if !seen[c.ID] {
			n.Children = append(n.Children, fo.task(c, seen))
		}
	}
	return n
}

// session builds the node of a root transcript and the tasks it dispatched.
func (fo *forest) session(id string, top []*dispatch.Task) *Node {
	n := &Node{Kind: "session", ID: id, Agent: "root", Status: "unknown"}
	recs, _, err := session.ReadFile(filepath.Join(taskdir.Open(fo.root).SessionsDir(), id+".jsonl"))
	if err == nil && len(recs) > 0 {
		st := session.Replay(recs)
		n.Usage, n.Status = st.Usage, st.Status
		if n.Status == "" {
			n.Status = "running"
		}
		for _, r := range recs {
			if r.Type == session.RecMeta && r.Model != "" {
				n.Model = r.Model
				break
			}
		}
		n.WallMS = wall(recs[0].Time, recs[len(recs)-1].Time)
	}
	seen := map[string]bool{}
	for _, t := range top {
		n.Children = append(n.Children, fo.task(t, seen))
	}
	return n
}

func wall(a, b time.Time) int64 {
	if a.IsZero() || b.Before(a) {
		return 0
	}
	return b.Sub(a).Milliseconds()
}

// rollUp prices every node and adds each subtree's usage and cost up.
func (fo *forest) rollUp(n *Node) {
	n.TreeUsage, n.TreeCostComplete = n.Usage, true
	if p, ok := fo.prices.Lookup(n.Model); ok {
		c := p.Cost(n.Usage)
		n.CostUSD, n.PriceNote, n.TreeCostUSD = &c, p.Note, c
	} else if n.Usage != (model.Usage{}) {
		n.TreeCostComplete = false
	}
	for _, c := range n.Children {
		fo.rollUp(c)
		n.TreeUsage = n.TreeUsage.Add(c.TreeUsage)
		n.TreeCostUSD += c.TreeCostUSD
		n.TreeCostComplete = n.TreeCostComplete && c.TreeCostComplete
	}
	if n.Children == nil {
		n.Children = []*Node{}
	}
}
