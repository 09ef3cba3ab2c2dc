package temporal

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
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

// runFrom names where a run's results must have been signed: run id, in
// its execution exec ("": any of its executions), each result a resume
// carried in the execution carried names for its task (signed by this
// submitter into the execution's submission).
type runFrom struct {
	id, exec string
	carried  map[string]string
	// plan and inputs are the run's as this submitter signed them: its
	// outputs are made again from the records taken (ownOutputs). nil
	// plan: none this submitter signed (noPlan says why), so no output is
	// shown (whoever completes the run's workflow chose its plan).
	plan   *wf.Plan
	inputs map[string]any
	noPlan string
	// bound: the execution's workflow required a result to name its
	// call (RunOutput.Bound, set by takeRun): one signed in it that names
	// none is refused; a result carried from an execution before is
	// taken as it was (its own execution's rule).
	bound bool
}

// execOf is the execution task's result must have been signed in.
func (f runFrom) execOf(task string) string {
	if r, ok := f.carried[task]; ok {
		return r
	}
	return f.exec
}

// takeRecords fails every call record of res that no signed result of
// signed (as verifyResults checked them) backs (Engine.recordRefusal),
// or whose task another record of the run already names (namedTwice),
// and shows of a taken one only what its signed result says (ownFigures,
// ownReason); nil Workers: none is checked. changed: a record is not as
// the run's workflow left it.
func (e *Engine) takeRecords(from runFrom, res *wf.Result, signed verdicts) (changed bool) {
	if e.cfg.Workers == nil || res == nil {
		return false
	}
	why := map[string]string{}
	keyOf := map[string]string{}
	for i := range res.Phases {
		for k := range res.Phases[i].Calls {
			c := &res.Phases[i].Calls[k]
			was := *c
			msg, taken := e.recordRefusal(from, *c, signed)
			if twice := namedTwice(keyOf, *c); twice != "" {
				msg, taken = twice, nil
			}
			ownFigures(c, taken)
			if msg != "" {
				why[c.Key] = msg
			} else {
				c.Error = ownReason(*c, signed.results)
			}
			changed = changed || msg != "" || !reflect.DeepEqual(was, *c)
		}
	}
	res.Refused(why)
	return changed
}

// namedTwice is why c is not taken when another plan call's record seen
// before (keyOf: task to key, which it adds c's to) names c's task: a
// task answers one call of a run ("": none does). The journal names a
// task again under its own key (a call stopped, then picked up).
func namedTwice(keyOf map[string]string, c wf.CallRecord) string {
	if c.TaskID == "" {
		return ""
	}
	if k, ok := keyOf[c.TaskID]; ok && k != c.Key {
		return "the run's record of call " + c.Key + " names task " + c.TaskID + ", which the record of call " + k + " names too: something else completed the run on Temporal (a task answers one call of a run); it was not taken"
	}
	keyOf[c.TaskID] = c.Key
	return ""
}

// ownFigures sets c's usage, attempts and worker to what its signed
// result says (taken: the result as checked; nil: none backs it, so none
// is shown: whoever completes the run writes a record's figures).
func ownFigures(c *wf.CallRecord, taken *CallOutput) {
	c.Usage, c.Attempts, c.Worker = model.Usage{}, 0, ""
	if taken == nil || taken.Sig == nil {
		return
	}
	c.Usage, c.Attempts, c.Worker = taken.Usage, taken.Attempts, printable(taken.Sig.Worker)
}

// ownReason is the reason the submitter shows for a taken record c: an
// ending no signed result backs shows only brood's own words; one whose
// signed result is a failure shows that failure's reason unless the
// record's says it (the executor words it in, as it words a local one).
// A cancelled call shows brood's reason, never its child's words: the
// result its worker signed with the cancel gives its figures alone
// (callcancel.go); only a failure signed as such (failed, killed, which
// the executor words in as "stopped with the run") keeps its reason.
func ownReason(c wf.CallRecord, signed map[string]SignedResult) string {
	if c.Output != nil || yields(c.Status) {
		return c.Error
	}
	if c.Status == wf.CallCancelled && broodEndings.MatchString(c.Error) {
		return c.Error // brood's workflow's: a cancel's signed result gives its figures alone (killed too)
	}
	s, ok := signed[c.TaskID]
	if c.Status == wf.CallCancelled && ok && c.TaskID != "" && s.Sig != nil && !signedFailure(s.Result.Status) {
		return cancelledUnshown
	}
	if !ok || c.TaskID == "" {
		who := "task " + c.TaskID
		if c.TaskID == "" {
			who = "call " + c.Key
		}
		return unsignedEnding(who, c.Status, c.Error)
	}
	if s.Sig == nil { // recordRefusal checked only a signed one
		return unsignedEnding("task "+c.TaskID, c.Status, c.Error)
	}
	if why := strings.TrimSuffix(s.Result.Error, "."); ending(s.Result.Status) && why != "" && !strings.Contains(c.Error, why) {
		return s.Result.Error
	}
	return c.Error
}

// signedFailure: a signed result's status whose reason a cancelled record
// shows, as a failed one's is: a failure the executor words in when the
// run was cancelled as it ended ("stopped with the run ...").
func signedFailure(status string) bool {
	return status == dispatch.StatusFailed || status == dispatch.StatusKilled
}

// recordRefusal is why c is not taken ("": it is), and the signed result
// that backs it as checked (nil: none does): a record with an output or
// a status that yields one needs a result a trusted worker key signed for
// the call in the execution from names for it (its verdict in signed),
// and must say what that result says; an ending with nothing to act on
// (failed, skipped, cancelled) needs none.
func (e *Engine) recordRefusal(from runFrom, c wf.CallRecord, signed verdicts) (string, *CallOutput) {
	v, ok := signed.of(c.TaskID)
	if !ok {
		if c.Output == nil && !yields(c.Status) {
			return "", nil
		}
		v = e.unsignedVerdict(from, c.TaskID)
	}
	if v.why != "" {
		return v.why, nil
	}
	out := v.out
	if c.Output != nil && !sameOutput(c.Output, &out.Result) || yields(c.Status) && !out.Result.OK() {
		return "the run's record of task " + c.TaskID + " does not say what its worker signed (status " + out.Result.Status + "): something else completed the run on Temporal; it was not taken", nil
	}
	if out.Sig == nil {
		return "", out
	}
	switch b := out.Sig.bind(); {
	case b == (callBind{}) && (!from.bound || from.execOf(c.TaskID) != from.exec):
		// A worker from before v3, in an execution whose workflow took
		// such results (a run from before the upgrade, or carried from
		// one): its answer as signed, as that workflow used it.
	case b == (callBind{}):
		return unboundReason(c.TaskID, from.id), nil
	case b.Brief == "" || b.Seq < 1:
		return fmt.Sprintf("the result of task %s names call %s but not the input it answers (no brief digest or call number): something else completed the run on Temporal; it was not taken", c.TaskID, printable(b.Call)), nil
	case b.Call != c.Key:
		return fmt.Sprintf("the run's record of call %s names task %s, whose worker signed its result for call %s: something else completed the run on Temporal; it was not taken", c.Key, c.TaskID, printable(b.Call)), nil
	}
	return "", out
}

// verdict is the submitter's check of one call's signed result
// (ResultTrust.check, and the trust-worker sentence of a key it does not
// trust): made by verifyResults (or unsignedVerdict, for a record no
// signed result backs) and by nothing else, once per command, so a later
// step takes a result only as that check left it, never one it did not
// check.
type verdict struct {
	signed SignedResult // as the run carried it
	out    *CallOutput  // as checked (a v1 signature's figures cleared)
	why    string       // the refusal ("": taken)
}

// verdicts are the verdicts of a run's signed results by task
// (verifyResults), with the results themselves (ownReason reads them).
type verdicts struct {
	byTask  map[string]verdict
	results map[string]SignedResult
}

// of is task's verdict (false: no signed result names it).
func (v verdicts) of(task string) (verdict, bool) {
	d, ok := v.byTask[task]
	return d, ok && task != ""
}

// verifyResults checks each of signed once, for the execution from names
// for its task (nil Workers: none is checked, none has a verdict); a
// signature memo says the replay verified already is not verified again.
func (e *Engine) verifyResults(from runFrom, signed map[string]SignedResult, memo *sigMemo) verdicts {
	v := verdicts{results: signed}
	if e.cfg.Workers == nil {
		return v
	}
	rt := e.cfg.Workers.withMemo(memo)
	v.byTask = make(map[string]verdict, len(signed))
	for task, s := range signed {
		v.byTask[task] = e.verify(rt, from, task, s)
	}
	return v
}

// verify is one result's verdict, by rt (e.cfg.Workers, with a memo).
func (e *Engine) verify(rt *ResultTrust, from runFrom, task string, s SignedResult) verdict {
	out := &CallOutput{Result: s.Result, Sig: s.Sig}
	rc := resultCall{Namespace: e.cfg.Namespace, Workflow: from.id, Run: from.execOf(task), Submitter: e.fingerprint(), Task: task}
	if err := rt.check(rc, out); err != nil {
		return verdict{signed: s, why: cmp.Or(e.untrustedReason(rc, from.id, out), err.Error())}
	}
	return verdict{signed: s, out: out}
}

// unsignedVerdict is the verdict of a record of task that says it yields
// an output with no signed result behind it: refused (signed by none).
func (e *Engine) unsignedVerdict(from runFrom, task string) verdict {
	return e.verify(e.cfg.Workers, from, task, SignedResult{Result: call.Result{TaskID: task, Status: dispatch.StatusDone}})
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
func (e *Engine) takeJournal(from runFrom, lines []wf.JournalLine, signed verdicts) []wf.JournalLine {
	if e.cfg.Workers == nil {
		return lines
	}
	out := make([]wf.JournalLine, len(lines))
	keyOf := map[string]string{}
	for i, l := range lines {
		if l.Rec != nil {
			rec := *l.Rec
			msg, taken := e.recordRefusal(from, rec, signed)
			if twice := namedTwice(keyOf, rec); twice != "" {
				msg, taken = twice, nil
			}
			ownFigures(&rec, taken)
			if msg != "" {
				rec.Status, rec.Output, rec.Error = "failed", nil, msg
			} else {
				rec.Error = ownReason(rec, signed.results)
			}
			l.Rec = &rec
		}
		out[i] = l
	}
	return out
}

// takeRun is an execution's output as this submitter takes it: its
// records and journal checked against the results its workers signed in
// the executions from names, its outputs made again from those records
// (ownOutputs), its calls' times the server's (takeTimes), kept under the
// run this submitter started or resumed (from.id), never under the one
// the output names (review21 P1-2).
func (e *Engine) takeRun(ctx context.Context, from runFrom, r *runRead) {
	defer takeTimes(r)
	out := &r.out
	if out.Result != nil {
		out.Result.RunID = from.id
	}
	from.bound = out.Bound
	r.verdicts = e.verifyResults(from, out.Input.Results, r.memo) // each signature checked once (the replay's kept): the steps below and carry take its verdict
	changed := e.takeRecords(from, out.Result, r.verdicts)
	if e.cfg.Workers != nil {
		ownChainReasons(out.Result, out.Input.ChainFails, func(task string, f *ChainFailure) bool {
			return e.cfg.Workers.checkChainFailure(resultCall{Namespace: e.cfg.Namespace, Workflow: from.id, Run: from.execOf(task), Submitter: e.fingerprint(), Task: task}, f)
		})
	}
	out.Journal = e.takeJournal(from, out.Journal, r.verdicts)
	switch {
	case e.cfg.Workers == nil:
	case from.plan == nil && out.Result != nil:
		dropOutputs(out.Result, from.noPlan)
	case !changed && outputsChecked(r, from):
		// The replayed workflow made them from these very records.
	default:
		ownOutputs(ctx, from.plan, from.inputs, out.Result)
	}
}

// outputsChecked: r's replayed workflow made its outputs as ownOutputs
// would make them again from its records, when takeRecords left every
// record as it was: it used only results a worker of the run signed for
// that very call (bound results: RunOutput.Bound, and the marker in its
// history), and ran the plan and inputs from names (the ones this
// submitter signed). A history from before bound results (no marker)
// gets its outputs made again (ownOutputs).
func outputsChecked(r *runRead, from runFrom) bool {
	return r.out.Bound && r.versions[boundResultsVersion] >= 1 && r.versions[checkedResultsVersion] >= 1 &&
		from.plan != nil && sameJSON(from.plan, r.start.Plan) && sameJSON(from.inputs, r.start.Inputs)
}

// carry is what of a run's signed results a resume hands the run's next
// execution: each result a trusted worker signed in the execution from
// names for its task (its verdict: takeRun's, signed) whose call is
// finished in journal (a cancelled one runs again, and its next result
// is signed in the next execution), and, by task, that execution
// (RunInput.Carried, signed). nil Workers: all of them, as they are.
func (e *Engine) carry(from runFrom, signed verdicts, journal []wf.JournalLine) (map[string]SignedResult, map[string]string) {
	if e.cfg.Workers == nil {
		return signed.results, nil
	}
	finished := map[string]bool{}
	for _, l := range journal {
		if l.Type == "done" && l.Rec != nil && l.Rec.TaskID != "" {
			finished[l.Rec.TaskID] = l.Rec.Status != wf.CallCancelled
		}
	}
	kept, carried := map[string]SignedResult{}, map[string]string{}
	for task, v := range signed.byTask {
		run := from.execOf(task)
		if !finished[task] || v.signed.Sig == nil || run == "" || v.why != "" {
			continue
		}
		kept[task], carried[task] = v.signed, run
	}
	return kept, carried
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

// untrustedReason is the trust-worker sentence for out when a key this
// submitter does not trust signed it for call c of this execution (the
// signature checked here: the key named is the one that signed, never a
// record's text), with the resume of run; "" otherwise.
func (e *Engine) untrustedReason(c resultCall, run string, out *CallOutput) string {
	s := out.Sig
	if s == nil || len(s.Key) != ed25519.PublicKeySize || out.TaskID != c.Task || c.Run == "" || s.Run != c.Run ||
		e.cfg.Workers.trust.trusts(s.Key) || sigVersion(c.Namespace, c.Workflow, c.Submitter, &out.Result, s) == 0 {
		return ""
	}
	key := FormatPublicKey(ed25519.PublicKey(s.Key), "")
	return fmt.Sprintf("the result of task %s is signed by worker key %s (%s), which this run's submitter does not trust, so the run did not use it: if it is the key your fleet's worker printed when it started, trust it with: brood fleet trust-worker '%s', then brood workflow resume %s", c.Task, Fingerprint(s.Key), key, key, run)
}

// keyJournal is the run's journal as the plan's workflow keeps it, which
// also knows the plan call each task it names is (the key its executor
// started or picked it up under): the call's key the workflow passes in
// its input (CallInput.Key), which its worker signs (callBind).
type keyJournal struct {
	*wf.FileJournal
	keys map[string]string
}

func newKeyJournal(j *wf.FileJournal) *keyJournal {
	return &keyJournal{FileJournal: j, keys: map[string]string{}}
}

// Lookup is the journal's entry of key, whose task (if any) is key's.
func (j *keyJournal) Lookup(key string) (wf.Entry, bool) {
	e, ok := j.FileJournal.Lookup(key)
	if e.TaskID != "" {
		j.keys[e.TaskID] = key
	}
	return e, ok
}

// Started records that key's call starts as task id.
func (j *keyJournal) Started(key, taskID string) error {
	j.keys[taskID] = key
	return j.FileJournal.Started(key, taskID)
}

// keyOf is the plan call task is ("": none the executor named; nil j:
// a single call's).
func (j *keyJournal) keyOf(task string) string {
	if j == nil {
		return ""
	}
	return j.keys[task]
}
