package run

import (
	"fmt"
	"io"
	"sync"

	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spend"
)

// bill adds up a run's cost: the root's own usage at its model's price,
// and every task it dispatched (and theirs below) at theirs, read from
// the task records when the run ends.
type bill struct {
	prices price.Table
	root   string // the project
	model  string // the root's model, as the price table knows it

	mu  sync.Mutex
	top []string // the root's own dispatches, in order
}

// observe wraps a dispatch event sink, noting the root's own dispatches.
func (b *bill) observe(next func(spawn.Event)) func(spawn.Event) {
	return func(ev spawn.Event) {
		if ev.Type == protocol.EvDispatchStart && ev.Parent == "" && ev.TaskID != "" {
			b.mu.Lock()
			b.top = append(b.top, ev.TaskID)
			b.mu.Unlock()
		}
		next(ev)
	}
}

// totals is the run's usage per model and its cost; a task record that
// cannot be read leaves its tokens out, with a line on errOut.
func (b *bill) totals(root, children model.Usage, errOut io.Writer) render.Totals {
	b.mu.Lock()
	top := append([]string(nil), b.top...)
	b.mu.Unlock()
	l, err := spend.Tasks(b.root, top)
	if err != nil {
		fmt.Fprintf(errOut, "brood: the subagents' cost is left out: %v\n", err)
	}
	l.Add(b.model, root)
	if _, ok := l[b.model]; !ok && b.model != "" {
		l[b.model] = model.Usage{} // the root's model is listed even at zero tokens, as in Claude Code
	}
	return render.Totals{Children: children, Models: l, Cost: l.Cost(b.prices)}
}

// priceKey is the name the root's usage is counted under: the model spec
// as given, or the resolved model's own name when only that has a price
// (an alias).
func priceKey(t price.Table, spec string, m model.Model) string {
	if _, ok := t.Lookup(spec); ok || m == nil {
		return spec
	}
	if _, ok := t.Lookup(m.Name()); ok {
		return m.Name()
	}
	return spec
}
