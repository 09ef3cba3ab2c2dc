package workflow

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/termsafe"
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
	if e.Phase != "" && e.Status == "running" && e.Counts == (wf.Counts{Queued: e.Queued}) {
		// The phase has only queued its calls: the next event says what
		// became of them (a resume's journaled calls are done, not
		// queued), and is not held back behind this one.
		return
	}
	p.last[e.Phase] = now
	if e.Phase == "" {
		// The run's own state: no worker has taken it, or none answers.
		fmt.Fprintf(p.w, "  the run is %s\n", termsafe.Line(e.Status))
		return
	}
	fmt.Fprintf(p.w, "  phase %s (%s) %s: %s\n", e.Phase, e.Shape, e.Status, counts(e.Counts))
}

// counts is a phase's calls by state; the rarer states only when some are
// in them ("landing in the run's tree": a fleet writer's change being put
// there; "to land": one there, in your tree only when the run ends, so not
// done yet).
func counts(c wf.Counts) string {
	s := fmt.Sprintf("%d done", c.Done)
	switch {
	case c.Journaled > 0 && c.Journaled == c.Done:
		s += " (journaled)"
	case c.Journaled > 0:
		s += fmt.Sprintf(" (%d journaled)", c.Journaled)
	}
	s += fmt.Sprintf(", %d running, %d failed", c.Running, c.Failed)
	for _, x := range []struct {
		n    int
		what string
	}{{c.Chaining, "landing in the run's tree"}, {c.Landing, "to land"}, {c.NotApplied, "not applied"}, {c.Skipped, "skipped"}, {c.Cancelled, "cancelled"}} {
		if x.n > 0 {
			s += fmt.Sprintf(", %d %s", x.n, x.what)
		}
	}
	return s + fmt.Sprintf(", %d queued", c.Queued)
}
