package fleetlink

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/model"
)

// TestWriteCall (fleetqa P2 9): brood tasks show of a fleet call counts
// its attempts once (the server's, in the header and the result), says a
// refused call was refused and by whom instead of naming an attempt, and
// names the transcript's size once.
func TestWriteCall(t *testing.T) {
	base := temporal.FleetTask{ID: "01TASK", Kind: "call", Agent: "general-purpose", Status: "failed"}
	for _, tc := range []struct {
		name      string
		t         temporal.FleetTaskDetail
		want, not []string
	}{
		{"failed for good, no attempt's result",
			temporal.FleetTaskDetail{FleetTask: base, Workflow: "brood-call-01TASK", Worker: "w1", Attempt: 3,
				Result: &call.Result{Status: "failed", Error: "the fleet's store is not the submitter's"}},
			[]string{"w1 (ran it; 3 attempt(s) on the fleet)", "result (failed, 3 attempt(s) on the fleet, none of them returned a result)", "error    the fleet's store is not the submitter's"},
			[]string{"0 attempt", "0 run", "0 tokens"}},
		{"done after a retry",
			temporal.FleetTaskDetail{FleetTask: base, Workflow: "brood-call-01TASK", Worker: "w2", Attempt: 2,
				Result: &call.Result{Status: "done", Attempts: 2, Usage: model.Usage{Input: 300, Output: 30}, Summary: "ok"}},
			[]string{"w2 (ran it; 2 attempt(s) on the fleet)", "result (done, 2 attempt(s) on the fleet, 300 tokens in, 30 out over them all)"},
			[]string{"run(s)"}},
		{"refused by a worker",
			temporal.FleetTaskDetail{FleetTask: base, Workflow: "brood-call-01TASK", Worker: "w1", Attempt: 1, Refused: true,
				LastFailure: "the submission is not signed by a trusted key"},
			[]string{"refused  by worker w1", "ran nothing", "last failure  the submission is not signed by a trusted key"},
			[]string{"(attempt 1)", "worker   w1"}},
		{"refused before a worker took it",
			temporal.FleetTaskDetail{FleetTask: base, Workflow: "brood-call-01TASK", Refused: true, LastFailure: "the run has no plan"},
			[]string{"refused  before any worker ran it"},
			[]string{"worker   ", "attempt"}},
		{"running, with its transcript",
			temporal.FleetTaskDetail{FleetTask: base, Workflow: "brood-call-01TASK", Worker: "w1", Attempt: 1,
				Heartbeat: &temporal.Heartbeat{Position: 3911, Transcript: temporal.Ref{Key: "sha256/abc", Size: 3911, SHA256: "abc"}}},
			[]string{"worker   w1 (attempt 1)", "transcript  3911 bytes in the store, under sha256/abc\n"},
			[]string{"(3911 bytes", "bytes, sha256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeCall(&b, &tc.t)
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("says %q:\n%s", n, out)
				}
			}
		})
	}
}
