// Package spend adds up what a run's agents used, model by model, and what
// that cost at the price table (internal/price): the root's own turns and
// every task below it, read from the task records. A model the table does
// not know adds its tokens and no cost; the total says so (Complete).
package spend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
)

// Ledger is usage per model (the model as it was named: a provider/model
// spec, script:FILE, an alias's target).
type Ledger map[string]model.Usage

// Add counts u against spec (nothing for zero usage).
func (l Ledger) Add(spec string, u model.Usage) {
	if u == (model.Usage{}) {
		return
	}
	l[spec] = l[spec].Add(u)
}

// Merge adds every entry of o.
func (l Ledger) Merge(o Ledger) {
	for m, u := range o {
		l.Add(m, u)
	}
}

// Total is every model's usage added up.
func (l Ledger) Total() model.Usage {
	var t model.Usage
	for _, u := range l {
		t = t.Add(u)
	}
	return t
}

// Models lists the ledger's models in order.
func (l Ledger) Models() []string {
	out := make([]string, 0, len(l))
	for m := range l {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Cost is a ledger at a price table.
type Cost struct {
	USD     float64            // the priced models' cost
	ByModel map[string]float64 // each priced model's cost
	// Unpriced names the models with usage and no price: their tokens are
	// counted, their cost is not (it is not in USD).
	Unpriced []string
	// Assumed is set when a price used is an assumption (see price.Default).
	Assumed bool
}

// Complete reports whether every model with usage had a price.
func (c Cost) Complete() bool { return len(c.Unpriced) == 0 }

// Priced reports whether any model had a price.
func (c Cost) Priced() bool { return len(c.ByModel) > 0 }

// Cost prices the ledger at t.
func (l Ledger) Cost(t price.Table) Cost {
	c := Cost{ByModel: map[string]float64{}}
	for _, m := range l.Models() {
		p, ok := t.Lookup(m)
		if !ok {
			c.Unpriced = append(c.Unpriced, m)
			continue
		}
		v := p.Cost(l[m])
		c.ByModel[m] = v
		c.USD += v
		if strings.HasPrefix(p.Note, "assumed") {
			c.Assumed = true
		}
	}
	return c
}

// String is the cost as a person reads it: "$0.0123", "$1.25", a "+" when
// models without a price are left out, and "" when nothing had one.
func (c Cost) String() string {
	if !c.Priced() {
		return ""
	}
	s := USD(c.USD)
	if !c.Complete() {
		s += "+"
	}
	return s
}

// USD formats an amount of dollars: cents for a dollar or more, four
// decimals below.
func USD(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}

// Tasks is the ledger of the tasks ids and every task below them, from the
// records under projectRoot: each task's own usage (its result's) against
// the model its envelope names. A task is counted once, however often it
// is named or reached.
func Tasks(projectRoot string, ids []string) (Ledger, error) {
	l := Ledger{}
	if len(ids) == 0 {
		return l, nil
	}
	all, err := tasksBelow(projectRoot, ids)
	if err != nil {
		return l, err
	}
	byID := map[string]*dispatch.Task{}
	below := map[string][]*dispatch.Task{}
	for _, t := range all {
		byID[t.ID] = t
		if t.Parent != "" {
			below[t.Parent] = append(below[t.Parent], t)
		}
	}
	seen := map[string]bool{}
	var walk func(t *dispatch.Task)
	walk = func(t *dispatch.Task) {
		if seen[t.ID] {
			return
		}
		seen[t.ID] = true
		l.Add(TaskModel(t), TaskUsage(t))
		for _, c := range below[t.ID] {
			walk(c)
		}
	}
	for _, id := range ids {
		if t := byID[id]; t != nil {
			walk(t)
		}
	}
	return l, nil
}

// tasksBelow loads the tasks ids and every task below them. Only when one
// of them could have dispatched (its envelope let it delegate, or its
// result counts usage below it) is the whole project listed to find them:
// a run's bill then costs its own K tasks, not every task the project
// ever ran.
func tasksBelow(projectRoot string, ids []string) ([]*dispatch.Task, error) {
	var out []*dispatch.Task
	for _, id := range ids {
		t, err := dispatch.LoadTask(projectRoot, id)
		if err != nil {
			continue // no record of it: nothing to bill
		}
		if mayHaveChildren(t) {
			return dispatch.ListTasks(projectRoot)
		}
		out = append(out, t)
	}
	return out, nil
}

func mayHaveChildren(t *dispatch.Task) bool {
	if e := t.Envelope; e == nil || (len(e.AllowedDestinations) > 0 && e.Depth < e.MaxDepth) {
		return true
	}
	return t.Result != nil && t.Result.ChildUsage != (model.Usage{})
}

// TaskModel is the model a task ran on, as its envelope names it ("" when
// it has none).
func TaskModel(t *dispatch.Task) string {
	if t.Envelope == nil {
		return ""
	}
	return t.Envelope.Model
}

// TaskUsage is a task's own usage (not its children's).
func TaskUsage(t *dispatch.Task) model.Usage {
	if t.Result == nil {
		return model.Usage{}
	}
	return t.Result.Usage
}
