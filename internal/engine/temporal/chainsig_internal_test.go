package temporal

import (
	"encoding/json"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestChainStepTakesOnlyASignedChange (review21 P1-2): a chain step puts
// into the run's tree only the change of a writer's result that a worker
// key it trusts signed for that call of this execution, never the change
// its input names: an impostor that completed the writer's activity with
// a patch of its making (unsigned, signed by a key the worker does not
// trust, signed for another task or execution) is refused for good
// before the worker touches its code cache; a trusted signature's change
// goes on (here to the cache this worker lacks).
func TestChainStepTakesOnlyASignedChange(t *testing.T) {
	info := testCallInfo(t)
	own, other := seeded(3), seeded(4)
	code, _ := json.Marshal(codesnap.Result{Tree: "t", Patch: &blobstore.Ref{Key: "sha256/good", SHA256: "good"}})
	forged := &codesnap.Result{Tree: "t", Patch: &blobstore.Ref{Key: "sha256/evil", SHA256: "evil"}}
	id := dispatch.NewID()
	signed := func(k *Signer, ci CallInfo, task string) *SignedResult {
		out := &CallOutput{Result: call.Result{TaskID: task, Agent: "general-purpose", Status: dispatch.StatusDone, Summary: "ok", Code: code}}
		if k != nil {
			NewWorkerKeys(k, nil).signResult(ci, "w1", out)
		}
		out.TaskID = id
		return &SignedResult{Result: out.Result, Sig: out.Sig}
	}
	elsewhere := info
	elsewhere.Run = "another-execution"
	for _, tc := range []struct {
		name   string
		result *SignedResult
		want   string
	}{
		{"no result", nil, "comes with no result a brood worker signed"},
		{"unsigned", signed(nil, info, id), "signed by no brood worker"},
		{"an untrusted key", signed(other, info, id), "which you do not trust"},
		{"another task's signature", signed(own, info, dispatch.NewID()), "not what worker key"},
		{"another execution's", signed(own, elsewhere, id), "another execution"},
		{"its own key, this call", signed(own, info, id), "no code cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Activities{Worker: "here", Keys: NewWorkerKeys(own, nil)}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(a.Chain, activity.RegisterOptions{Name: ChainActivityName})
			_, err := env.ExecuteActivity(ChainActivityName, ChainInput{TaskID: id, Tip: &codesnap.Snapshot{Tree: "t"},
				Change: codesnap.Change{Start: &codesnap.Snapshot{Tree: "t"}, Result: forged}, Result: tc.result})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("chain step: %v; want it to say %q", err, tc.want)
			}
		})
	}
}
