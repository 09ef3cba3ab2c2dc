package delegate

import (
	"context"
	"io"
	"sync"

	"github.com/broodhq/brood/internal/protocol"
)

// Ask is a child's permission question on its way to the user, and Answer
// the user's answer: the wire types of package protocol (the TUI consumes
// them under these names).
type (
	Ask    = protocol.Ask
	Answer = protocol.Answer
)

// AskFunc puts a child's question to the user and waits for the answer (or
// for ctx to end: a denial).
type AskFunc func(ctx context.Context, a Ask) Answer

// EnvAskParent tells a child that its parent takes its permission
// questions (a person is at the top of the tree). Without it a child denies
// what needs approval, as a run without a person does. The answers come down
// the child's stdin, the pipe only the parent holds.
const EnvAskParent = "BROOD_ASK_PARENT"

// maxPendingAsks bounds the questions one child may have open at once; more
// are denied at once (a child cannot flood its user).
const maxPendingAsks = 4

// childAsks is the parent's end of one child's questions: each is put to
// the dispatcher's AskFunc (or denied, without one) and answered down the
// child's stdin.
type childAsks struct {
	d         *Dispatcher
	ctx       context.Context // ends when the child's run does
	id, agent string
	input     chan []byte
	mu        sync.Mutex
	pending   int
}

func (c *childAsks) handle(m protocol.Ask) {
	if m.ID == "" || len(m.ID) > protocol.MaxID {
		return
	}
	a := m
	a.ID = ""
	a.Subject = clip(a.Subject, 4096)
	a.Reason = clip(a.Reason, 1024)
	if len(a.Rules) > 8 {
		a.Rules = a.Rules[:8]
	}
	for i := range a.Rules {
		a.Rules[i] = clip(a.Rules[i], 512)
	}
	if a.TaskID == "" || a.TaskID == c.id {
		// The child's own question: who asks is what this process knows.
		a.TaskID, a.Agent, a.Via = c.id, c.agent, nil
	} else {
		// A descendant's, relayed by the child: as it says, and through it.
		if len(a.Via) > 16 {
			a.Via = a.Via[:16]
		}
		a.TaskID, a.Agent, a.Via = clip(a.TaskID, 64), clip(a.Agent, 128), append(a.Via, c.id)
	}
	if c.d.cfg.Ask == nil || !c.take() {
		c.reply(Answer{ID: m.ID})
		return
	}
	go func() {
		ans := c.d.cfg.Ask(c.ctx, a)
		c.d.AcceptConfig(ans.Wrote...)
		c.done()
		ans.ID = m.ID
		c.reply(ans)
	}()
}

// take counts one more open question, unless the child has too many.
func (c *childAsks) take() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending >= maxPendingAsks {
		return false
	}
	c.pending++
	return true
}

func (c *childAsks) done() {
	c.mu.Lock()
	c.pending--
	c.mu.Unlock()
}

func (c *childAsks) reply(m protocol.Message) { sendDown(c.ctx, c.input, m) }

// sendDown queues one message for a child's stdin (the pool writes it).
func sendDown(ctx context.Context, input chan<- []byte, m protocol.Message) {
	b, err := protocol.Marshal(m)
	if err != nil {
		return
	}
	select {
	case input <- append(b, '\n'):
	case <-ctx.Done():
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// parentLink is the child's end of the requests it sends up (permission
// asks, hook requests): it sends them and reads the replies from stdin,
// whose end (EOF) means the parent is gone.
type parentLink struct {
	out   *events
	mu    sync.Mutex
	asks  map[string]chan Answer
	hooks map[string]chan protocol.HookReply
	turns map[string]chan struct{} // turn boundaries waiting (turnwire.go)
	gone  bool
	// hookFilter is the hook events the root runs and their matchers
	// (EnvHooksParent).
	hookFilter protocol.HookFilter
}

// read delivers replies until stdin ends, then calls gone.
func (l *parentLink) read(r io.Reader, gone func()) {
	for m, err := range protocol.Read(r) {
		if err != nil {
			continue
		}
		switch m := m.(type) {
		case protocol.Answer:
			l.mu.Lock()
			ch := l.asks[m.ID]
			delete(l.asks, m.ID)
			l.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case protocol.HookReply:
			l.mu.Lock()
			ch := l.hooks[m.ID]
			delete(l.hooks, m.ID)
			l.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case protocol.TurnReply:
			l.turnReply(m)
		}
	}
	l.mu.Lock()
	l.gone = true
	for id, ch := range l.asks {
		close(ch)
		delete(l.asks, id)
	}
	for id, ch := range l.hooks {
		close(ch)
		delete(l.hooks, id)
	}
	for id, ch := range l.turns {
		close(ch)
		delete(l.turns, id)
	}
	l.mu.Unlock()
	gone()
}

// ask sends a question up and waits for its answer; the parent gone or ctx
// ended is a denial.
func (l *parentLink) ask(ctx context.Context, a Ask) Answer {
	a.ID = protocol.NewAskID()
	ch := make(chan Answer, 1)
	l.mu.Lock()
	if l.gone {
		l.mu.Unlock()
		return Answer{}
	}
	if l.asks == nil {
		l.asks = map[string]chan Answer{}
	}
	l.asks[a.ID] = ch
	l.mu.Unlock()
	l.out.send(a)
	select {
	case ans, ok := <-ch:
		if ok {
			ans.ID = ""
			return ans
		}
	case <-ctx.Done():
		l.mu.Lock()
		delete(l.asks, a.ID)
		l.mu.Unlock()
	}
	return Answer{}
}

// relay is the AskFunc of a child's own dispatcher: its children's
// questions go on up (nil when no one above takes them).
func (l *parentLink) relay() AskFunc {
	if l == nil {
		return nil
	}
	return l.ask
}
