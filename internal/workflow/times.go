package workflow

import (
	"time"

	"github.com/broodhq/brood/internal/call"
)

// localTimes gives a call whose engine said nothing of its times (the
// local pool) its wait and its run from its process's record: queued from
// asked (when the executor handed it to the runner, its plan slot taken)
// to its child's start, ran the child's wall time. A fleet call's times
// come with it (its worker's start, by the server's clock).
func localTimes(r *call.Result, asked time.Time) {
	if r == nil || r.QueuedMS != 0 || r.RanMS != 0 || r.Process == nil || r.Process.Started.IsZero() {
		return
	}
	if q := r.Process.Started.Sub(asked); q > 0 && !asked.IsZero() {
		r.QueuedMS = q.Milliseconds()
	}
	r.RanMS = r.Process.WallMS
}
