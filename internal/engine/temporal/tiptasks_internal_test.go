package temporal

import (
	"crypto/ed25519"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestTipSignsItsWriters: a chain step's tip names, signed, the writers
// whose changes are in it: the previous tip's (only when its signature
// checks for this execution) and its own unless it conflicted; a list changed since, or a v2
// signature passed off as v1, is refused; a v1 tip a worker signed before
// still checks (it names no writers).
func TestTipSignsItsWriters(t *testing.T) {
	w := seeded(7)
	keys := NewWorkerKeys(w, nil)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	rt := NewResultTrust(trust, "trusted_workers")
	const run, t1, t2 = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W", "01M94GP8WHCA3G6AZ1AHXZK69W"
	info := CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Attempt: 1}
	tip1 := &codesnap.Snapshot{Tree: strings.Repeat("c", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	sig1 := keys.signTip(info, "w1", t1, tip1, keys.tipTasks(info, ChainInput{TaskID: t1}, &codesnap.Chained{Applied: true}))
	other := info
	other.Run = "E0"
	old := keys.signTip(other, "w1", t1, tip1, []string{t1})
	v1 := &TipSig{Key: w.key.Public().(ed25519.PublicKey), Worker: "w1", Task: t1, Attempt: 1, Run: "E1"}
	v1.Sig = ed25519.Sign(w.key, tipClaimOf(DefaultNamespace, run, "", tip1, v1))
	applied, conflict := &codesnap.Chained{Applied: true, Files: []string{"c.txt"}}, &codesnap.Chained{Files: []string{"c.txt"}, Conflict: "patch does not apply"}
	for _, tc := range []struct {
		name  string
		prev  *TipSig
		ch    *codesnap.Chained
		tasks []string
	}{
		{"this execution's tip", sig1, applied, []string{t1, t2}},
		{"another execution's tip", old, applied, []string{t2}},
		{"a v1 tip", v1, applied, []string{t2}},
		{"no signature", nil, applied, []string{t2}},
		{"its change in conflict (the tip unchanged)", sig1, conflict, []string{t1}},
		{"its change in conflict on the base", nil, conflict, nil},
	} {
		got := keys.tipTasks(info, ChainInput{TaskID: t2, Tip: tip1, TipSig: tc.prev}, tc.ch)
		if !slices.Equal(got, tc.tasks) {
			t.Errorf("%s: the next tip names %v; want %v", tc.name, got, tc.tasks)
		}
	}
	changed := *sig1
	changed.Tasks = []string{t1, t2}
	down := *sig1
	down.V, down.Tasks = 1, nil
	for _, tc := range []struct {
		name string
		s    *TipSig
		ok   bool
	}{
		{"as signed", sig1, true},
		{"v1 signed before", v1, true},
		{"its writers changed", &changed, false},
		{"v2 passed off as v1", &down, false},
	} {
		if err := rt.checkTip(DefaultNamespace, run, "E1", "", tip1, tc.s); (err == nil) != tc.ok {
			t.Errorf("%s: checkTip: %v; want ok %v", tc.name, err, tc.ok)
		}
	}
}
