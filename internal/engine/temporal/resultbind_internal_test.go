package temporal

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestGateTakesAResultForItsOwnCallOnly (review25 P1-8): the plan's
// workflow uses a genuine, trusted result only for the call its worker
// signed it for (key, number, input); another call's is a failed call
// with brood's reason (one the submitter shows as it is), and a result
// that names no call (a worker from before v3) is refused with the
// upgrade line, in a run that checks bindings; a run from before them
// (its history has no bound-results marker) takes it as it did.
func TestGateTakesAResultForItsOwnCallOnly(t *testing.T) {
	w := seeded(7)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	const run, task = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W"
	spec := call.Spec{Agent: "explore", Prompt: "ALPHA", TaskID: task, Parent: "workflow " + run}
	in := CallInput{Spec: spec, Seq: 1, Key: "a/0"}
	sign := func(b callBind) *CallOutput {
		out := &CallOutput{Result: call.Result{TaskID: task, Agent: "explore", Status: "done", Summary: "alpha-answer"}}
		NewWorkerKeys(w, nil).signResult(CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Attempt: 1, Bind: b}, "w1", out)
		return out
	}
	other := in
	other.Spec.Prompt, other.Key = "BETA", "a/1"
	v2 := func() *CallOutput {
		out := sign(callBind{})
		out.Sig.Sig = signV2(w, out)
		return out
	}
	for _, tc := range []struct {
		name  string
		out   *CallOutput
		bound bool
		ok    bool
		why   string
	}{
		{"its own call's", sign(bindOf(in)), true, true, ""},
		{"another call's input and key", sign(bindOf(other)), true, false, "for another call of this run"},
		{"its key, another number", sign(callBind{Call: "a/0", Seq: 2, Brief: callDigest(in)}), true, false, "for another call of this run"},
		{"its key and number, another brief", sign(callBind{Call: "a/0", Seq: 1, Brief: callDigest(other)}), true, false, "for another call of this run"},
		{"naming no call (v2)", v2(), true, false, "upgrade every worker of the fleet, then brood workflow resume " + run},
		{"naming no call, a run from before bindings", v2(), false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &resultGate{rt: NewResultTrust(trust, ""), call: resultCall{Namespace: DefaultNamespace, Workflow: run, Run: "E1"}, bound: tc.bound}
			out := *tc.out
			g.take(in, &out)
			if taken := out.Status == "done" && out.Summary == "alpha-answer"; taken != tc.ok {
				t.Fatalf("taken %v (%s: %s); want %v", taken, out.Status, out.Error, tc.ok)
			}
			if !tc.ok && (!strings.Contains(out.Error, tc.why) || unsignedEnding("task "+task, out.Status, out.Error) != out.Error) {
				t.Errorf("reason %q; want one brood's submitter shows, saying %q", out.Error, tc.why)
			}
		})
	}
}

// signV2 is a v2 signature of out (a worker from before results named
// their call).
func signV2(w *Signer, out *CallOutput) []byte {
	return ed25519.Sign(w.key, resultClaimVersion(DefaultNamespace, "01M94GP8WHCA3G6AZ1AHXZK600", "", &out.Result, out.Sig, sigV2))
}

// TestNamedTwice: a task answers one call of a run: a record naming a
// task another call's record named before is refused; the journal's
// lines of one call (stopped, then picked up) name it again and pass.
func TestNamedTwice(t *testing.T) {
	keyOf := map[string]string{}
	for _, tc := range []struct {
		rec     wf.CallRecord
		refused bool
	}{
		{wf.CallRecord{Key: "a/0", TaskID: "T1"}, false},
		{wf.CallRecord{Key: "a/0", TaskID: "T1"}, false},
		{wf.CallRecord{Key: "a/1", TaskID: "T2"}, false},
		{wf.CallRecord{Key: "a/2", TaskID: "T1"}, true},
		{wf.CallRecord{Key: "a/3"}, false},
		{wf.CallRecord{Key: "a/4"}, false},
	} {
		if why := namedTwice(keyOf, tc.rec); (why != "") != tc.refused || tc.refused && !strings.Contains(why, "the record of call a/0 names too") {
			t.Errorf("%s naming %q: %q; want refused %v", tc.rec.Key, tc.rec.TaskID, why, tc.refused)
		}
	}
}

// TestKeyNamesItsCallOfThePlan: a plan call's key (as the workflow names
// it, and its worker signs it) is one call of the signed plan, and the
// worker admits the call only as that call: another call's brief under a
// key is refused, as is a key that names no call; a call with no key (a
// workflow from before) is checked against every call of the plan.
func TestKeyNamesItsCallOfThePlan(t *testing.T) {
	c := func(id, prompt string) wf.Call { return wf.Call{ID: id, Agent: "explore", Prompt: prompt} }
	p := &wf.Plan{Name: "p", Phases: []wf.Phase{
		{ID: "a", Parallel: []wf.Call{c("", "ALPHA"), c("b", "BETA")}},
		{ID: "e", Each: "a.output", Stages: []wf.Call{c("", "item {{item}}")}},
		{ID: "q", UntilQuiet: &wf.UntilQuiet{Call: c("", "find"), Key: "k"}},
		{ID: "v", Votes: &wf.Votes{Call: c("", "vote {{vote}}"), Count: 3, Field: "c"}},
	}}
	const run = "01M94GP8WHCA3G6AZ1AHXZK600"
	spec := func(prompt string) call.Spec {
		return call.Spec{Agent: "explore", Prompt: prompt, Description: wf.CallDescription("p", &wf.Call{}, prompt), TaskID: "01M94GP8WHCA3G6AZ1AHXZK68W", Parent: "workflow " + run}
	}
	// An each over an agent's output: its item is that agent's words, in
	// an untrusted block (wf.PromptMatches).
	itemX, err := wf.Render("item {{item}}", map[string]any{"item": "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, prompt string
		ok          bool
	}{
		{"a/0", "ALPHA", true},
		{"a/b", "BETA", true},
		{"a/0", "BETA", false},
		{"a/b", "ALPHA", false},
		{"a/1", "BETA", false},
		{"e/3/0", itemX, true},
		{"e/3/0", "item x", false},
		{"e/3/0", "ALPHA", false},
		{"e/x/0", itemX, false},
		{"q/r2/0", "find", true},
		{"q/r2/0", "vote 1", false},
		{"v/v2", "vote 2", true},
		{"v/v2", "find", false},
		{"v/2", "vote 2", false},
		{"z/0", "ALPHA", false},
		{"", "BETA", true},
	} {
		err := planCovers(p, nil, run, spec(tc.prompt), tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("key %q, prompt %q: %v; want admitted %v", tc.key, tc.prompt, err, tc.ok)
		}
	}
}

// TestUnboundResultsTakenWhereTheirRunTookThem (review26 P2-2): a result
// a worker from before v3 signed (it names no call) is refused only in
// an execution whose workflow required results to name their call
// (RunOutput.Bound, from the submitter's replay); a run from before the
// upgrade, or a result a resume carried from such an execution, keeps
// it as it was. A v3 signature naming the record's key but no input is
// refused.
func TestUnboundResultsTakenWhereTheirRunTookThem(t *testing.T) {
	w := seeded(7)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	e := New(Config{Workers: NewResultTrust(trust, "trusted_workers")})
	const run, task = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W"
	sign := func(exec string, b callBind) SignedResult {
		out := &CallOutput{Result: call.Result{TaskID: task, Agent: "explore", Status: "done", Summary: "found it"}}
		info := CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: exec, Attempt: 1, Bind: b}
		NewWorkerKeys(w, nil).signResult(info, "w1", out)
		if b == (callBind{}) {
			out.Sig.Sig = ed25519.Sign(w.key, resultClaimVersion(DefaultNamespace, run, "", &out.Result, out.Sig, sigV2))
		}
		return SignedResult{Result: out.Result, Sig: out.Sig}
	}
	for _, tc := range []struct {
		name   string
		signed SignedResult
		bound  bool
		from   runFrom
		ok     bool
		why    string
	}{
		{"v2, a run from before bound results", sign("E1", callBind{}), false, runFrom{id: run, exec: "E1"}, true, ""},
		{"v2, in a run that requires bound results", sign("E1", callBind{}), true, runFrom{id: run, exec: "E1"}, false, "upgrade every worker of the fleet"},
		{"v2, carried from an execution before", sign("E1", callBind{}), true, runFrom{id: run, exec: "E2", carried: map[string]string{task: "E1"}}, true, ""},
		{"v3, its call and input", sign("E1", callBind{Call: "p/0", Seq: 1, Brief: "b"}), true, runFrom{id: run, exec: "E1"}, true, ""},
		{"v3, its call, no input", sign("E1", callBind{Call: "p/0"}), true, runFrom{id: run, exec: "E1"}, false, "not the input it answers"},
		{"v3, another call", sign("E1", callBind{Call: "p/1", Seq: 2, Brief: "b"}), false, runFrom{id: run, exec: "E1"}, false, "signed its result for call p/1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &wf.Result{RunID: run, Status: wf.RunDone, Phases: []wf.PhaseResult{{ID: "p", Shape: "parallel", Status: wf.PhaseDone,
				Calls: []wf.CallRecord{{Key: "p/0", TaskID: task, Status: wf.CallDone, Output: "found it"}}, Output: []any{"found it"}}}}
			ro := &RunOutput{Input: RunInput{Results: map[string]SignedResult{task: tc.signed}}, Result: res, Bound: tc.bound}
			e.takeRun(context.Background(), tc.from, &runRead{out: *ro})
			c := res.Phases[0].Calls[0]
			if taken := c.Status == wf.CallDone && c.Output != nil; taken != tc.ok || !tc.ok && !strings.Contains(c.Error, tc.why) {
				t.Errorf("record %s (%s); want taken %v (%q)", c.Status, c.Error, tc.ok, tc.why)
			}
		})
	}
}
