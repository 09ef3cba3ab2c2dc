package spawn

import (
	"context"
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
