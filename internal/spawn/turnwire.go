package spawn

import (
	"context"
	"sync"

	"github.com/broodhq/brood/internal/protocol"
)

// Turn boundaries (protocol.Turn): a child whose envelope says SyncTurns
// stops before each model request after its first until its parent says
// go on. The parent's caller (call.Watch.Turn: a fleet worker) makes the
// transcript durable meanwhile, so a call killed at any moment is continued
// from its last finished turn and never asks a finished turn again.

// childTurns is the parent's end of one child's turn boundaries. The child
// is hostile: it can only make the caller record its transcript, one
// boundary at a time (a boundary that arrives while one is being recorded
// is answered at once), and everything but the request's id is ignored.
type childTurns struct {
	ctx   context.Context // the call's: ends when it does
	f     func(context.Context, int) bool
	final func(context.Context, int) bool // a final answer's boundary (nil: f)
	input chan []byte
	busy  sync.Mutex
	wg    sync.WaitGroup // the boundaries the caller is recording
}

func (c *childTurns) handle(m protocol.Turn) {
	if m.ID == "" || len(m.ID) > protocol.MaxID {
		return // not a request: nothing to answer
	}
	reply := protocol.TurnReply{ID: m.ID}
	if c.f == nil || !c.busy.TryLock() {
		sendDown(c.ctx, c.input, reply)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f := c.f
		if m.Final && c.final != nil {
			f = c.final
		}
		ok := f(c.ctx, m.Turn)
		// Free before the go-ahead: the child's next boundary may follow
		// it at once and must be recorded, not answered unrecorded.
		c.busy.Unlock()
		if ok {
			sendDown(c.ctx, c.input, reply)
		}
	}()
}

// wait returns once every boundary handed to the caller has been
// recorded (the child of a final answer ends without waiting for it).
func (c *childTurns) wait() { c.wg.Wait() }
