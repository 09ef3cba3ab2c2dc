package delegate

import (
	"context"
	"sync"

	"github.com/broodhq/brood/internal/protocol"
)

// progress reads one child's protocol lines and relays them up as Events:
// every kind the child emits reaches this dispatcher's OnEvent (and, in a
// child that delegates, its own parent), except those the protocol keeps
// local (ping, started, result). It is called from one goroutine per
// child; asks are answered on their own goroutines.
type progress struct {
	d     *Dispatcher
	emit  func(Event) // this dispatch's sink (see WithEvents)
	id    string
	agent string
	depth int

	asks    *childAsks  // the child's permission asks (delegate/ask.go)
	hooks   *childHooks // its hook requests (delegate/hookwire.go)
	tree    *tree       // what it reported of its subtree
	mu      sync.Mutex
	lastErr string
	said    bool // the child wrote a line
}

// saidAnything reports whether the child wrote any line on stdout.
func (p *progress) saidAnything() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.said
}

func (p *progress) line(ctx context.Context, b []byte) {
	p.mu.Lock()
	p.said = true
	p.mu.Unlock()
	m, err := protocol.Unmarshal(b)
	if err != nil {
		return // not protocol: a child's stray output is data, ignored
	}
	ev := Event{TaskID: p.id, Agent: p.agent, Depth: p.depth}
	switch m := m.(type) {
	case protocol.Progress:
		if len(m.Tools) == 0 {
			return
		}
		ev.Type, ev.Tools = protocol.EvProgress, m.Tools
	case protocol.Usage:
		ev.Type, ev.Usage = protocol.EvUsage, m.Total // the child's running count
	case protocol.BudgetWarning:
		ev.Type, ev.Text = protocol.EvBudgetWarning, m.Text
	case protocol.BudgetExceeded:
		ev.Type, ev.Text = protocol.EvBudgetExceeded, m.Text
	case protocol.Ask:
		// Relayed up by childAsks to whoever can answer (the TUI, or a
		// delegating child's own parent); the answer goes down on stdin.
		if p.asks != nil {
			p.asks.handle(m)
		}
		return
	case protocol.Hook:
		// Run by the root's hooks (or relayed up by a delegating child);
		// the reply goes down on stdin.
		if p.hooks != nil {
			p.hooks.handle(m)
		}
		return
	case protocol.Nested:
		// A grandchild's event, relayed by the child: passed up as it is
		// (tool names and statuses only, never a transcript), and its start
		// announced here too, where a human can see it.
		if m.Event.TaskID == p.id || m.Event.TaskID == "" {
			return // a child does not speak for itself as its own grandchild
		}
		if m.Event.Parent == "" {
			m.Event.Parent = p.id // a nested task hangs below the child that relays it
		}
		if m.Event.Type == protocol.EvDispatchStart {
			if p.tree != nil {
				p.d.report(p.tree, p.id, p.depth, m.Event)
			}
			p.d.announce(m.Event.TaskID, m.Event.Agent, m.Event.Depth, m.Event.MaxDepth)
		}
		p.emit(m.Event)
		return
	case protocol.Result:
		// Local: the verdict comes from result.json. Only the child's
		// error is kept, as words for a child that could not write it.
		p.mu.Lock()
		p.lastErr = m.Error
		p.mu.Unlock()
		return
	default:
		return
	}
	p.emit(ev)
}

// lastError is the error the child's last Result line gave ("" none).
func (p *progress) lastError() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}
