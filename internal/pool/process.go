package pool

import (
	"errors"
	"io"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
)

// Line is one line a child printed on its stdout.
type Line struct {
	Text []byte
	// Ping marks a heartbeat ({"ping":true}): proof of life, no event.
	Ping bool
}

// ErrExited is Send's error once the process has ended.
var ErrExited = errors.New("the child process has exited")

// Process is a started child as its caller holds it: the lines it prints,
// its stdin, and how it ended. The pool supervises it until it ends,
// whether or not anyone reads it.
type Process struct {
	pid     int
	started time.Time
	exited  <-chan struct{}

	lines chan Line
	taken atomic.Bool // Lines or Wait has claimed the lines

	inMu     sync.Mutex // one message at a time
	stdin    io.Writer
	inClosed atomic.Bool

	done chan struct{}
	out  *dispatch.Output // set before done closes
}

func newProcess(pid int, started time.Time, stdin io.Writer, exited <-chan struct{}) *Process {
	return &Process{pid: pid, started: started, stdin: stdin, exited: exited, lines: make(chan Line, 64), done: make(chan struct{})}
}

// PID is the process's id (its session's and process group's).
func (p *Process) PID() int { return p.pid }

// Started is when the process was started.
func (p *Process) Started() time.Time { return p.started }

// Lines yields every non-empty line the child prints on stdout, in order,
// heartbeats included (Line.Ping), until its stdout ends. It can be ranged
// over once; lines left when the loop stops early are discarded, so the
// child never blocks on a full pipe.
func (p *Process) Lines() iter.Seq[Line] {
	return func(yield func(Line) bool) {
		if !p.taken.CompareAndSwap(false, true) {
			return
		}
		for l := range p.lines {
			if !yield(l) {
				go drain(p.lines)
				return
			}
		}
	}
}

// Send writes one whole message (with its newline) to the child's stdin:
// the parent-to-child direction of the protocol. It fails once the process
// has exited, or when the child stopped reading.
func (p *Process) Send(b []byte) error {
	if p.inClosed.Load() {
		return ErrExited
	}
	select {
	case <-p.exited:
		return ErrExited
	default:
	}
	// A write blocked on a child that stopped reading ends when the pool
	// closes the pipe after the child's exit.
	p.inMu.Lock()
	defer p.inMu.Unlock()
	_, err := p.stdin.Write(b)
	return err
}

// closeInput stops Send before the pool closes the stdin pipe.
func (p *Process) closeInput() {
	p.inClosed.Store(true)
}

// Wait waits for the process to end, its whole tree torn down and its
// output read, and returns how it ended. Lines nobody has claimed are
// discarded.
func (p *Process) Wait() *dispatch.Output {
	if p.taken.CompareAndSwap(false, true) {
		go drain(p.lines)
	}
	<-p.done
	return p.out
}

// Done is closed once Wait would return without blocking.
func (p *Process) Done() <-chan struct{} { return p.done }

func drain(ch <-chan Line) {
	for range ch {
	}
}
