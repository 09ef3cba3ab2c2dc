package workflow

import (
	"fmt"
	"io"
	"sync"
	"time"

	wf "github.com/broodhq/brood/internal/workflow"
)

// progress prints one line per phase change on stderr — counts only, never
// a child's transcript — at most every 500ms per phase while it runs.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	last map[string]time.Time
	seen map[string]wf.Event
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, last: map[string]time.Time{}, seen: map[string]wf.Event{}}
}

func (p *progress) event(e wf.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev, had := p.seen[e.Phase]
	if had && prev == e {
		return
	}
	p.seen[e.Phase] = e
	now := time.Now()
	if e.Status == "running" && had && prev.Status == "running" && now.Sub(p.last[e.Phase]) < 500*time.Millisecond {
		return
	}
	p.last[e.Phase] = now
	fmt.Fprintf(p.w, "  phase %s (%s) %s: %d done, %d running, %d failed, %d queued\n", e.Phase, e.Shape, e.Status, e.Done, e.Running, e.Failed, e.Queued)
}
