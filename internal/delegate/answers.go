package delegate

import (
	"context"
	"io"
	"sync"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/protocol"
)

// answers is a child's side of the parent→child direction: the Answers to
// the asks it sent up, matched by id.
type answers struct {
	mu      sync.Mutex
	waiting map[string]chan protocol.Answer
	closed  bool
}

func newAnswers() *answers { return &answers{waiting: map[string]chan protocol.Answer{}} }

// read delivers the parent's messages from r until EOF; then every pending
// ask is denied (the parent is gone).
func (a *answers) read(r io.Reader) {
	for m, err := range protocol.Read(r) {
		if ans, ok := m.(protocol.Answer); ok && err == nil {
			a.deliver(ans)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for id, ch := range a.waiting {
		ch <- protocol.Answer{ID: id, Reason: "the parent process exited"}
		delete(a.waiting, id)
	}
}

func (a *answers) deliver(ans protocol.Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch, ok := a.waiting[ans.ID]; ok {
		ch <- ans
		delete(a.waiting, ans.ID)
	}
}

// Ask sends ask up and waits for its Answer (denied when ctx ends or the
// parent goes).
func (a *answers) Ask(ctx context.Context, out *events, ask protocol.Ask) protocol.Answer {
	ask.ID = protocol.NewAskID()
	ch := make(chan protocol.Answer, 1)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return protocol.Answer{ID: ask.ID, Reason: "the parent process exited"}
	}
	a.waiting[ask.ID] = ch
	a.mu.Unlock()
	out.send(ask)
	select {
	case ans := <-ch:
		return ans
	case <-ctx.Done():
		a.mu.Lock()
		delete(a.waiting, ask.ID)
		a.mu.Unlock()
		return protocol.Answer{ID: ask.ID, Reason: "cancelled while waiting for an answer"}
	}
}

// relay is the OnAsk of a delegating child's own dispatcher: its children's
// asks go up to its parent, keeping the grandchild's task and agent.
func (a *answers) relay(out *events) func(context.Context, protocol.Ask) protocol.Answer {
	return func(ctx context.Context, ask protocol.Ask) protocol.Answer {
		return a.Ask(ctx, out, ask)
	}
}

func deref(u *model.Usage) model.Usage {
	if u == nil {
		return model.Usage{}
	}
	return *u
}
