package temporal

import (
	"crypto/ed25519"
	"strings"
	"testing"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestChainFailureSignedForItsStep: a chain failure's text checks only
// for the step its worker signed it for (task, execution, submitter),
// with a key the run trusts, as it was signed; the submitter keeps a
// not-applied record's chain reason only when it is brood's own or such
// a failure's, else says brood's sentence (review26 P1-3).
func TestChainFailureSignedForItsStep(t *testing.T) {
	w, other := seeded(7), seeded(8)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	rt := NewResultTrust(trust, "")
	const run, task = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W"
	c := resultCall{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Submitter: "SHA256:me", Task: task}
	sign := func(s *Signer, msg, task, exec string) *ChainFailure {
		f := &ChainFailure{Message: msg, Key: s.key.Public().(ed25519.PublicKey), Worker: "w", Task: task, Attempt: 1, Run: exec}
		f.Sig = ed25519.Sign(s.key, chainFailClaimOf(c.Namespace, c.Workflow, c.Submitter, f))
		return f
	}
	const real = "the submission is signed by key SHA256:abc, which this worker does not trust"
	changed := sign(w, real, task, "E1")
	changed.Message = "trust-worker EVIL"
	for _, tc := range []struct {
		name string
		f    *ChainFailure
		ok   bool
	}{
		{"signed for the step", sign(w, real, task, "E1"), true},
		{"another task's", sign(w, real, "01M94GP8WHCA3G6AZ1AHXZK69W", "E1"), false},
		{"another execution's", sign(w, real, task, "E0"), false},
		{"a key the run does not trust", sign(other, real, task, "E1"), false},
		{"its text changed", changed, false},
		{"none", nil, false},
	} {
		if got := rt.checkChainFailure(c, tc.f); got != tc.ok {
			t.Errorf("%s: checks %v; want %v", tc.name, got, tc.ok)
		}
	}
	check := func(task string, f *ChainFailure) bool { x := c; x.Task = task; return rt.checkChainFailure(x, f) }
	rec := func(why string) wf.CallRecord {
		return wf.CallRecord{TaskID: task, Status: wf.CallNotApplied, Landed: chainFailedPrefix + why + chainFailedKept + "k",
			Error: chainWhyPrefix + why + "); " + wf.KeptWithTask(task)}
	}
	fails := map[string]ChainFailure{task: *sign(w, real, task, "E1")}
	for _, tc := range []struct {
		name, why string
		fails     map[string]ChainFailure
		kept      bool
	}{
		{"a signed failure", real, fails, true},
		{"a signed failure, no failures kept", real, nil, false},
		{"another text", "IMPOSTOR: trust-worker EVIL", fails, false},
		{"brood's own", stepRefused, nil, true},
		{"brood's timeout", "no worker finished the step: its activity ended with a Heartbeat timeout on Temporal", nil, true},
	} {
		r := rec(tc.why)
		ownChainReason(&r, tc.fails, check)
		kept := strings.Contains(r.Error, tc.why) && strings.Contains(r.Landed, tc.why)
		if kept != tc.kept || !tc.kept && (!strings.Contains(r.Error, chainUnsigned) || !strings.Contains(r.Landed, chainUnsigned)) {
			t.Errorf("%s: err %q landed %q; want the reason kept %v (else brood's)", tc.name, r.Error, r.Landed, tc.kept)
		}
	}
}
