package childrun

import (
	"sync"
	"time"

	"github.com/broodhq/brood/internal/protocol"
)

// Progress batching: a child tells its parent the names of the tools it
// calls (never their inputs, outputs or the model's reasoning), five at a
// time across turns, and any batch not yet full within a second of its
// first name. A child doing one tool per turn makes one progress line per
// five calls when its turns are quick, and no name waits longer than a
// second however slow they are.
const (
	progressBatch = 5
	progressFlush = time.Second
)

// toolBatch collects the child's tool names and sends them up in batches.
// Safe for concurrent use (its timer flushes from its own goroutine).
type toolBatch struct {
	send func(protocol.Message)
	wait time.Duration

	mu    sync.Mutex
	names []string
	timer *time.Timer
	gen   int // the batch the running timer was set for
}

func newToolBatch(send func(protocol.Message)) *toolBatch {
	return &toolBatch{send: send, wait: progressFlush}
}

// add takes one tool name: a full batch goes at once, the first name of a
// batch sets its deadline.
func (b *toolBatch) add(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.names = append(b.names, name)
	if len(b.names) >= progressBatch {
		b.flushLocked()
		return
	}
	if b.timer == nil {
		gen := b.gen
		b.timer = time.AfterFunc(b.wait, func() { b.flushGen(gen) })
	}
}

// flush sends what is collected now (at the end of the run).
func (b *toolBatch) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

// flushGen is the deadline of batch gen: it sends that batch unless it has
// gone already.
func (b *toolBatch) flushGen(gen int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen == b.gen {
		b.flushLocked()
	}
}

func (b *toolBatch) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.names) == 0 {
		return
	}
	b.gen++
	names := b.names
	b.names = nil
	b.send(protocol.Progress{Tools: names})
}
