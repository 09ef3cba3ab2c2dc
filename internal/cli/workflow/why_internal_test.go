package workflow

import (
	"strings"
	"testing"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestWhyFailedSaysTheCallsErrors: a run's text ends with why its calls
// failed — a refusal of the whole submission once for every call it
// stopped — and nothing for calls that yielded, were skipped or
// cancelled, or whose change did not land (said on a line of its own).
// Each reason is one line, whole however long (a foreign key's refusal
// ends saying where to add the key: issue 26 F2), and sanitised.
func TestWhyFailedSaysTheCallsErrors(t *testing.T) {
	refused := "the worker refused the submission: it is not signed (brood fleet keygen, then submit again)"
	foreign := "the submission is signed by key SHA256:dD9+" + strings.Repeat("x", 200) + ", which the workers that took it (brood-worker:vm:1, brood-worker:vm:2) do not trust: a queue's workers share one allowlist; add its public key to theirs (brood worker --trusted-key, or ~/.config/brood/fleet/trusted_keys) if you trust who holds it; the call is tried again"
	res := &wf.Result{Phases: []wf.PhaseResult{
		{ID: "e", Calls: []wf.CallRecord{
			{Key: "e/0", Status: "failed", Error: refused}, {Key: "e/1", Status: "failed", Error: refused},
			{Key: "e/2", Status: "failed", Error: refused}, {Key: "e/3", Status: "failed", Error: refused},
			{Key: "e/4", Status: "done", Output: "ok"},
			{Key: "e/5", Status: wf.CallSkipped, Error: "held back"},
			{Key: "e/6", Status: wf.CallNotApplied, Error: "conflict"},
		}},
		{ID: "f", Calls: []wf.CallRecord{{Key: "f/0", Status: "killed", Error: "silent for 60s\nmore"}}},
		{ID: "g", Calls: []wf.CallRecord{{Key: "g/0", Status: "failed", Error: foreign}, {Key: "g/1", Status: "failed", Error: "forged \x1b]0;title\x07 error"}}},
	}}
	got := whyFailed(res)
	want := []string{"failed e/0, e/1, e/2 and 1 more: " + refused, "failed f/0: silent for 60s more", "failed g/0: " + foreign, "failed g/1: forged  error"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("whyFailed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProgressSaysLanding: a fleet writer whose change is being put into
// the run's tree is said to be landing there, not queued.
func TestProgressSaysLanding(t *testing.T) {
	got := counts(wf.Counts{Done: 1, Chaining: 1})
	if want := "1 done, 0 running, 0 failed, 1 landing in the run's tree, 0 queued"; got != want {
		t.Errorf("counts = %q, want %q", got, want)
	}
}
