package tui

import (
	"time"

	"github.com/broodhq/brood/internal/dispatch"
)

// A dispatch is announced (dispatch_start) when it is queued for a pool
// slot, not when its process starts: the tree shows it "queued", without
// counting it as running, until its records say it started.

// startedMsg says a queued task's process started.
type startedMsg struct{ id string }

// queuedPoll is how often a queued task's records are read.
const queuedPoll = 250 * time.Millisecond

// watchStart reads a newly dispatched task's records until it leaves the
// queue (or ends, or the engine stops), and reports the start.
func (e *engine) watchStart(id string) {
	tick := time.NewTicker(queuedPoll)
	defer tick.Stop()
	for {
		t, err := dispatch.LoadTask(e.cfg.ProjectRoot, id)
		if err != nil {
			return
		}
		if t.Status != dispatch.StatusQueued {
			if t.Status == dispatch.StatusRunning {
				e.send(startedMsg{id: id})
			}
			return
		}
		select {
		case <-e.life.Done():
			return
		case <-tick.C:
		}
	}
}

// start marks a queued task running (from startedMsg, or from any sign of
// work: progress, usage).
func (t *tree) start(id string, now time.Time) {
	if n := t.nodes[id]; n != nil && n.status == dispatch.StatusQueued && n.stopped.IsZero() {
		n.status, n.started = "running", now
	}
}

// queued counts the dispatches waiting for a pool slot.
func (t *tree) queued() int {
	c := 0
	for _, n := range t.nodes {
		if n.stopped.IsZero() && n.status == dispatch.StatusQueued {
			c++
		}
	}
	return c
}
