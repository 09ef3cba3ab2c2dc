package temporal

import (
	"maps"
	"strings"
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/codesnap"
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
