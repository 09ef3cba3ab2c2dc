package temporal

import (
	"crypto/ed25519"
	"maps"
	"strings"
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestOldHistoriesGetTheSubmittersChecks: the submitter leaves out its
// own check of a run's tip (checkedTip) and its making of the run's
// outputs again (ownOutputs) only for a history whose workflow made them
// itself on the submitter's terms (the checked-tips and bound-results
// markers, a tip signed in that execution); the recorded histories from
// before those checks still get both, and a completer's outputs on them
// are never shown.
func TestOldHistoriesGetTheSubmittersChecks(t *testing.T) {
	for _, file := range []string{"plan-history-before-lazy-calls.json", "plan-history-checked-results-v1.json"} {
		t.Run(file, func(t *testing.T) {
			h, id, exec, _ := fixture(t, file)
			r, err := New(Config{}).readRun(id, exec, h, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := New(Config{Workers: NewResultTrust(nil, "")})
			if r.start.Workers != nil {
				e = New(Config{Workers: r.start.Workers.resultTrust()})
			}
			from := runFrom{id: id, exec: exec, plan: r.start.Plan, inputs: r.start.Inputs}
			own := r.start
			if outputsChecked(&r, from) || e.tipsChecked(&r, own) {
				t.Errorf("a history from before the workflow's checks (versions %v): outputs checked %v, tip checked %v; want the submitter's own checks of both",
					r.versions, outputsChecked(&r, from), e.tipsChecked(&r, own))
			}
			if r.start.Workers != nil {
				// The same run as today's workflow records it: every
				// marker, bound results, the tip signed in the execution.
				now := r
				now.versions = map[string]workflow.Version{}
				for change, v := range workflowChanges() {
					now.versions[change] = workflow.Version(v)
				}
				now.out.Bound, now.out.Input.TipSig = true, &TipSig{Run: exec}
				now.start.Namespace, now.start.Signed = e.cfg.Namespace, nil
				tree := &codesnap.Snapshot{Tree: strings.Repeat("a", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
				now.start.Code, own.Code = tree, tree
				if !outputsChecked(&now, from) || !e.tipsChecked(&now, own) {
					t.Errorf("a history with the workflow's checks: outputs checked %v, tip checked %v; want both left to the replayed workflow",
						outputsChecked(&now, from), e.tipsChecked(&now, own))
				}
				for name, off := range map[string]func(r *runRead){
					"a tip its start carried": func(r *runRead) { r.out.Input.TipSig = &TipSig{Run: "an earlier execution"} },
					"another start tree":      func(r *runRead) { r.start.Code = &codesnap.Snapshot{Tree: strings.Repeat("c", 40)} },
					"keys it does not trust":  func(r *runRead) { r.start.Workers = &WorkerSet{Keys: [][]byte{make([]byte, 32)}} },
					"another submitter":       func(r *runRead) { r.start.Signed = &Signed{Key: make([]byte, 32)} },
					"no checked-tips marker":  func(r *runRead) { delete(r.versions, checkedTipsVersion) },
				} {
					x := now
					x.versions = maps.Clone(now.versions)
					off(&x)
					if e.tipsChecked(&x, own) {
						t.Errorf("%s: the tip taken as the workflow checked it; want the submitter's own check", name)
					}
				}
				if other := (runFrom{id: id, exec: exec, plan: r.start.Plan, inputs: map[string]any{"x": 1}}); outputsChecked(&now, other) {
					t.Errorf("outputs of a run started with other inputs than its submitter signed taken as checked")
				}
			}
			r.out.Result.Outputs = map[string]any{"forged": "by whoever completed the run"}
			e.takeRun(t.Context(), from, &r)
			if _, ok := r.out.Result.Outputs["forged"]; ok {
				t.Errorf("outputs %v: a completer's outputs shown for a history from before the workflow's checks", r.out.Result.Outputs)
			}
		})
	}
}

// TestSubmitterVerifiesWhatTheReplayDidNot: a result signature the
// replay's workflow code verified (its result gate, which keeps what it
// verified in the replay's memo: the recorded history's) is not verified
// again by the submitter's own check of the same result for the same
// call (verifyResults with that memo), and its verdict is the same as
// without the memo; a result signed for another call is still refused.
func TestSubmitterVerifiesWhatTheReplayDidNot(t *testing.T) {
	h, id, exec, _ := fixture(t, "plan-history-checked-results-v1.json")
	if r, err := New(Config{}).readRun(id, exec, h, nil); err != nil || r.memo == nil || len(r.memo.v) == 0 {
		t.Fatalf("the replay's result gate kept no signature it verified (%v)", err)
	}
	const run, task = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W"
	ws := &WorkerSet{Keys: [][]byte{[]byte(seeded(5).key.Public().(ed25519.PublicKey))}}
	e := New(Config{Workers: ws.resultTrust()})
	c := resultCall{Namespace: e.cfg.Namespace, Workflow: run, Run: "E1", Task: task}
	out := &CallOutput{Result: call.Result{TaskID: task, Agent: "explore", Status: dispatch.StatusDone, Summary: "found it"}}
	in := CallInput{Spec: call.Spec{TaskID: task, Agent: "explore"}, Key: "p/0", Seq: 1}
	NewWorkerKeys(seeded(5), nil).signResult(CallInfo{Namespace: c.Namespace, Workflow: run, Run: "E1", Attempt: 1, Bind: bindOf(in)}, "w:1", out)
	memo := newSigMemo()
	gate := &resultGate{rt: ws.resultTrust().withMemo(memo), call: resultCall{Namespace: c.Namespace, Workflow: run, Run: "E1"}, bound: true}
	if u := gate.take(in, out); u != nil || out.Status != dispatch.StatusDone {
		t.Fatalf("the gate refused an honest result: %+v", out.Result)
	}
	signed := map[string]SignedResult{task: {Result: out.Result, Sig: out.Sig}}
	verified, hits := len(memo.v), memo.hits
	for _, tc := range []struct {
		name string
		from runFrom
		memo *sigMemo
		ok   bool
	}{
		{"the replay's memo", runFrom{id: run, exec: "E1"}, memo, true},
		{"no memo", runFrom{id: run, exec: "E1"}, nil, true},
		{"another run, the replay's memo", runFrom{id: "01M94GP8WHCA3G6AZ1AHXZK601", exec: "E1"}, memo, false},
	} {
		v := e.verifyResults(tc.from, signed, tc.memo)
		if d := v.byTask[task]; (d.why == "") != tc.ok {
			t.Errorf("%s: verdict %q; want taken %v", tc.name, d.why, tc.ok)
		}
		if tc.ok && tc.memo != nil && (len(memo.v) != verified || memo.hits != hits+1) {
			t.Errorf("%s: the submitter verified %d signature(s) anew, took %d from the replay's; want none anew, the one", tc.name, len(memo.v)-verified, memo.hits-hits)
		}
	}
}
