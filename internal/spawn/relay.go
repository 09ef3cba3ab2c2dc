package spawn

import (
	"context"
	"sync"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/termsafe"
)

// progress reads one child's protocol lines and relays them up as Events:
// every kind the child emits reaches this dispatcher's OnEvent (and, in a
// child that delegates, its own parent), except those the protocol keeps
// local (ping, started, result). It is called from one goroutine per
// child; asks are answered on their own goroutines.
//
// The child is hostile, and so is what it says: its own events carry this
// process's knowledge of it (task id, agent, depth), never the line's; a
// descendant's event (Nested) is relayed only from a child that may
// delegate, and only about a task it reported starting below itself (see
// tree), stamped with where that task hangs; every name and text in it is
// made safe to show (termsafe) and bounded.
type progress struct {
	d     *Dispatcher
	emit  func(Event) // this call's sink (call.Watch.Events, then Config.OnEvent)
	id    string
	agent string
	depth int
	// delegates is set when the child may dispatch (its envelope's
	// MayDelegate): a child that may not has no descendants to speak of.
	delegates bool

	asks    *childAsks  // the child's permission asks (ask.go)
	hooks   *childHooks // its hook requests (hookwire.go)
	turns   *childTurns // its turn boundaries (turnwire.go)
	tree    *tree       // what it reported of its subtree
	calls   *callLog    // its tool calls, as its own code said them
	mu      sync.Mutex
	lastErr string
	said    bool // the child wrote a line
	// started are the descendants' starts as relayed (stamped), by task id;
	// stopped those whose stop was relayed: nothing more is said of them.
	started map[string]Event
	stopped map[string]bool
}

// Bounds on what one event may carry.
const (
	maxEventTools = 16
	maxNameLen    = 128
	maxEventText  = 4 << 10
)

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
		ev.Type, ev.Tools = protocol.EvProgress, safeNames(m.Tools)
	case protocol.ToolCall:
		// The parent's own record of the child's calls (callrecord.go),
		// which its guardrails judge; never relayed.
		if p.calls != nil {
			p.calls.add(m)
		}
		return
	case protocol.Usage:
		ev.Type, ev.Usage = protocol.EvUsage, m.Total // the child's running count
	case protocol.BudgetWarning:
		ev.Type, ev.Text = protocol.EvBudgetWarning, safeText(m.Text)
	case protocol.BudgetExceeded:
		ev.Type, ev.Text = protocol.EvBudgetExceeded, safeText(m.Text)
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
	case protocol.Turn:
		// Answered here once the caller made the turn durable (or at
		// once when it does not ask to); never relayed.
		if p.turns != nil {
			p.turns.handle(m)
		}
		return
	case protocol.Nested:
		if e, ok := p.nested(m.Event); ok {
			p.emit(e)
		}
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

// nested checks a descendant's event relayed by the child and returns it
// as this process vouches for it, or false when it is not relayed: the
// child may not delegate; the task is not one it reported starting below
// itself (a start is taken once, below the child or a task already under
// it); the task was reported stopped already. A start is announced here
// too, where a human can see it.
func (p *progress) nested(in protocol.Event) (Event, bool) {
	if !p.delegates || p.tree == nil || dispatch.CheckID(in.TaskID) != nil || in.TaskID == p.id {
		return Event{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped[in.TaskID] {
		return Event{}, false
	}
	if in.Type == protocol.EvDispatchStart {
		if in.Parent == "" {
			in.Parent = p.id // a nested task hangs below the child that relays it
		}
		if !p.d.report(p.tree, p.id, p.depth, in) {
			return Event{}, false
		}
		n, _ := p.tree.lookup(in.TaskID)
		start := Event{Type: protocol.EvDispatchStart, TaskID: in.TaskID, Parent: in.Parent, Agent: termsafe.Line(n.agent),
			Depth: n.depth, MaxDepth: p.d.cfg.MaxDepth, Description: safeName(in.Description, maxEventText), Via: p.id}
		if p.started == nil {
			p.started = map[string]Event{}
		}
		p.started[in.TaskID] = start
		p.d.announce(start.TaskID, start.Agent, start.Depth, start.MaxDepth)
		return start, true
	}
	start, ok := p.started[in.TaskID]
	if !ok {
		return Event{}, false // a task it never reported starting
	}
	out := Event{Type: safeName(in.Type, 32), TaskID: start.TaskID, Parent: start.Parent, Agent: start.Agent,
		Depth: start.Depth, MaxDepth: start.MaxDepth, Description: start.Description, Via: p.id,
		Tools: safeNames(in.Tools), Usage: in.Usage, WallMS: max(in.WallMS, 0), Text: safeText(in.Text)}
	switch in.Type {
	case protocol.EvDispatchStop:
		if p.stopped == nil {
			p.stopped = map[string]bool{}
		}
		p.stopped[in.TaskID] = true
		out.Status, out.KilledBy = safeStatus(in.Status), safeName(in.KilledBy, 32)
	case protocol.EvProgress, protocol.EvUsage, protocol.EvBudgetWarning, protocol.EvBudgetExceeded, protocol.EvBackgroundDone:
		out.Status = safeStatus(in.Status)
	default:
		// An ask reaches the person through the Ask request, which is
		// answered; an event of another kind is not relayed.
		return Event{}, false
	}
	return out, true
}

// safeStatus is a relayed status: one of the statuses a record holds, or
// "" when the child said something else.
func safeStatus(s string) string {
	switch s {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint, dispatch.StatusFailed,
		dispatch.StatusKilled, dispatch.StatusCancelled, dispatch.StatusRunning, dispatch.TrustRejected:
		return s
	}
	return ""
}

// safeName is one line of a child's text, escaped and bounded.
func safeName(s string, n int) string { return termsafe.Line(clip(s, n)) }

// safeText is a child's message, escaped and bounded.
func safeText(s string) string { return termsafe.Text(clip(s, maxEventText)) }

// safeNames are a child's tool names, escaped and bounded in number.
func safeNames(names []string) []string {
	if len(names) > maxEventTools {
		names = names[:maxEventTools]
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, safeName(n, maxNameLen))
	}
	return out
}

// lastError is the error the child's last Result line gave ("" none).
func (p *progress) lastError() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}
