package temporal

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// Signed plan calls (docs/scale-out.md, "Who a submitter trusts"): whoever
// completes a plan's workflow writes its result, so the workflow hands the
// submitter each call's result as its worker signed it (RunInput.Results)
// and the submitter shows a call's record (result.json, the journal,
// brood workflow show) only when it agrees with a result a worker key it
// trusts signed for that call of the run; any other is failed with
// brood's own reason, never the record's text.

// SignedResult is a call's result as its worker returned and signed it.
type SignedResult struct {
	Result call.Result `json:"result"`
	Sig    *ResultSig  `json:"sig"`
}

// signed keeps out's result and signature on the run (a signed one).
func (r *activityRunner) signed(out *CallOutput) {
	if out.Sig == nil || out.TaskID == "" {
		return
	}
	if r.in.Results == nil {
		r.in.Results = map[string]SignedResult{}
	}
	r.in.Results[out.TaskID] = SignedResult{Result: out.Result, Sig: out.Sig}
}

// takeRecords fails every call record of res that no signed result of
// signed backs (Engine.recordRefusal); nil Workers: none is checked.
func (e *Engine) takeRecords(runID string, res *wf.Result, signed map[string]SignedResult) {
	if e.cfg.Workers == nil || res == nil {
		return
	}
	why := map[string]string{}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			if msg := e.recordRefusal(runID, c, signed); msg != "" {
				why[c.Key] = msg
			}
		}
	}
	res.Refused(why)
}

// recordRefusal is why c is not taken ("": it is): a record with an
// output or a status that yields one needs a result a trusted worker key
// signed for the call in this run (any of its executions), and must say
// what that result says; an ending with nothing to act on (failed,
// skipped, cancelled) needs none.
func (e *Engine) recordRefusal(runID string, c wf.CallRecord, signed map[string]SignedResult) string {
	s, ok := signed[c.TaskID]
	if !ok || c.TaskID == "" {
		if c.Output == nil && !yields(c.Status) {
			return ""
		}
		s = SignedResult{Result: call.Result{TaskID: c.TaskID, Status: dispatch.StatusDone}}
	}
	out := &CallOutput{Result: s.Result, Sig: s.Sig}
	if err := e.cfg.Workers.check(resultCall{Namespace: e.cfg.Namespace, Workflow: runID, Submitter: e.fingerprint(), Task: c.TaskID}, out); err != nil {
		return err.Error()
	}
	if c.Output != nil && !sameOutput(c.Output, &s.Result) || yields(c.Status) && !s.Result.OK() {
		return "the run's record of task " + c.TaskID + " does not say what its worker signed (status " + s.Result.Status + "): something else completed the run on Temporal; it was not taken"
	}
	return ""
}

// yields: a record status that comes with an output (recordOf: done).
func yields(status string) bool { return status == wf.CallDone }

// sameOutput: v is the output the plan takes of r (recordOf): its
// structured output, else its summary.
func sameOutput(v any, r *call.Result) bool {
	if s, ok := v.(string); ok && s == r.Summary {
		return true
	}
	got, _ := json.Marshal(v)
	var want any
	if json.Unmarshal(r.Output, &want) != nil {
		return false
	}
	w, _ := json.Marshal(want)
	var a, b any
	_ = json.Unmarshal(got, &a)
	_ = json.Unmarshal(w, &b)
	return reflect.DeepEqual(a, b)
}

// takeJournal is lines with every call record no signed result backs
// failed with brood's reason (recordRefusal): what result.json's journal
// keeps, and what a resume continues from.
func (e *Engine) takeJournal(runID string, lines []wf.JournalLine, signed map[string]SignedResult) []wf.JournalLine {
	if e.cfg.Workers == nil {
		return lines
	}
	out := make([]wf.JournalLine, len(lines))
	for i, l := range lines {
		if l.Rec != nil {
			if msg := e.recordRefusal(runID, *l.Rec, signed); msg != "" {
				rec := *l.Rec
				rec.Status, rec.Output, rec.Error = "failed", nil, msg
				l.Rec = &rec
			}
		}
		out[i] = l
	}
	return out
}

// takeRun is an execution's output as this submitter takes it: its
// records and journal checked against the results its workers signed,
// kept under the run this submitter started or resumed (runID), never
// under the one the output names (review21 P1-2).
func (e *Engine) takeRun(runID string, out *RunOutput) {
	if out.Result != nil {
		out.Result.RunID = runID
	}
	e.takeRecords(runID, out.Result, out.Input.Results)
	out.Journal = e.takeJournal(runID, out.Journal, out.Input.Results)
}

// signedChange is the change a chain step puts into the run's tree: the
// one in the writer's result as a worker key k trusts (its own, or one it
// continues calls of) signed it for this call of this execution; else the
// one-line refusal (an impostor that completed the call's activity gets
// no change of its making into a tree a trusted worker signs).
func (k *WorkerKeys) signedChange(info CallInfo, in ChainInput) (*codesnap.Result, error) {
	if in.Result == nil {
		return nil, fmt.Errorf("the change of task %s comes with no result a brood worker signed: something else completed the call on Temporal; it was not put into the run's tree", in.TaskID)
	}
	trust := NewTrust()
	for key, from := range k.trusted.keys {
		trust.keys[key] = from
	}
	trust.keys[string(k.own.Public().(ed25519.PublicKey))] = "this worker's key"
	out := &CallOutput{Result: in.Result.Result, Sig: in.Result.Sig}
	c := resultCall{Namespace: info.Namespace, Workflow: info.Workflow, Run: info.Run, Submitter: info.Submitter, Task: in.TaskID}
	if err := NewResultTrust(trust, "").check(c, out); err != nil {
		return nil, fmt.Errorf("%v (by the worker of its chain step, which trusts its own key and those it continues calls of)", err)
	}
	if in.Result.Sig == nil {
		return nil, fmt.Errorf("the change of task %s comes with an unsigned %s result: it was not put into the run's tree", in.TaskID, printable(out.Status))
	}
	var res codesnap.Result
	if err := json.Unmarshal(out.Code, &res); err != nil || res.Patch == nil {
		return nil, fmt.Errorf("the signed result of task %s has no change to put into the run's tree", in.TaskID)
	}
	return &res, nil
}
