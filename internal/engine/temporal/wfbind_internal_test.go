package temporal

import (
	"context"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestRunChecksBindTheExecution: within a run, a call's signed result and
// the run's signed tree are taken only for the execution they must be
// from — the one the output is of, or, for what a resume carried, the
// execution the resume checked it in (signed into its submission). A
// genuine signature of an older execution of the same run is refused.
func TestRunChecksBindTheExecution(t *testing.T) {
	w := seeded(7)
	keys := NewWorkerKeys(w, nil)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	e := New(Config{Workers: NewResultTrust(trust, "trusted_workers")})
	const run, task = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W"
	out := &CallOutput{Result: call.Result{TaskID: task, Agent: "explore", Status: "done", Summary: "found it"}}
	keys.signResult(CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Attempt: 1, Bind: callBind{Call: "p/0", Seq: 1, Brief: "b"}}, "w1", out)
	signed := map[string]SignedResult{task: {Result: out.Result, Sig: out.Sig}}
	for _, tc := range []struct {
		name string
		from runFrom
		ok   bool
	}{
		{"this execution's", runFrom{id: run, exec: "E1"}, true},
		{"an older execution's, not carried", runFrom{id: run, exec: "E2"}, false},
		{"an older execution's, carried from it", runFrom{id: run, exec: "E2", carried: map[string]string{task: "E1"}}, true},
		{"carried from another execution", runFrom{id: run, exec: "E3", carried: map[string]string{task: "E2"}}, false},
	} {
		t.Run("result: "+tc.name, func(t *testing.T) {
			res := &wf.Result{RunID: run, Status: wf.RunDone, Phases: []wf.PhaseResult{{ID: "p", Shape: "parallel", Status: wf.PhaseDone,
				Calls: []wf.CallRecord{{Key: "p/0", TaskID: task, Status: wf.CallDone, Output: "found it"}}, Output: []any{"found it"}}}}
			ro := &RunOutput{Input: RunInput{Results: signed}, Result: res}
			e.takeRun(context.Background(), tc.from, &runRead{out: *ro})
			c := res.Phases[0].Calls[0]
			if taken := c.Status == wf.CallDone && c.Output != nil; taken != tc.ok {
				t.Errorf("record %s (%s); want taken %v", c.Status, c.Error, tc.ok)
			}
			if !tc.ok && !strings.Contains(c.Error, "another execution") {
				t.Errorf("error %q; want it to name another execution", c.Error)
			}
			journal := []wf.JournalLine{{Type: "done", Key: "p/0", TaskID: task, Rec: &wf.CallRecord{Key: "p/0", TaskID: task, Status: wf.CallDone, Output: "found it"}}}
			kept, carried := e.carry(tc.from, e.verifyResults(tc.from, signed, nil), journal)
			if _, ok := kept[task]; ok != tc.ok || tc.ok && carried[task] != "E1" {
				t.Errorf("carried %v %v; want it carried (from E1) %v", kept, carried, tc.ok)
			}
		})
	}

	// A call the execution's cancel stopped runs again in the next one,
	// whose result is signed there: its earlier result is not carried.
	stopped := []wf.JournalLine{{Type: "done", Key: "p/0", TaskID: task, Rec: &wf.CallRecord{Key: "p/0", TaskID: task, Status: wf.CallCancelled}}}
	if kept, carried := e.carry(runFrom{id: run, exec: "E1"}, e.verifyResults(runFrom{id: run, exec: "E1"}, signed, nil), stopped); len(kept) != 0 || len(carried) != 0 {
		t.Errorf("a stopped call's result carried: %v %v; want it run (and signed) again", kept, carried)
	}

	base := &codesnap.Snapshot{Tree: strings.Repeat("a", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	tip := &codesnap.Snapshot{Tree: strings.Repeat("c", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	sig := keys.signTip(CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Attempt: 1}, "w1", task, tip, []string{task}, base.Tree, "")
	for _, tc := range []struct {
		name string
		sub  *Submission
		exec string
		ok   bool
	}{
		{"left by the execution read", &Submission{}, "E1", true},
		{"left by an older execution", &Submission{}, "E2", false},
		{"the tree the execution read started from (its resume checked it)", &Submission{Tip: tip}, "E2", true},
	} {
		t.Run("tip: "+tc.name, func(t *testing.T) {
			in := RunInput{RunID: run, Code: base, Tip: tip, TipSig: sig}
			_, err := e.takeTip(context.Background(), ownPart(in, tc.sub), in, tipRun(tc.exec, tc.sub), false)
			if (err == nil) != tc.ok {
				t.Errorf("takeTip: %v; want ok %v", err, tc.ok)
			}
		})
	}
}

// TestSignedFailureReasonIsTheWorkers: a record whose signed result is a
// failure shows the reason its worker signed, not one the record's
// writer put in its place; the executor's wording around it stays.
func TestSignedFailureReasonIsTheWorkers(t *testing.T) {
	w := seeded(7)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	e := New(Config{Workers: NewResultTrust(trust, "trusted_workers")})
	const run, task = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W"
	out := &CallOutput{Result: call.Result{TaskID: task, Agent: "explore", Status: "failed", Error: "the child exited 2."}}
	NewWorkerKeys(w, nil).signResult(CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Attempt: 1, Bind: callBind{Call: "p/0", Seq: 1, Brief: "b"}}, "w1", out)
	for _, tc := range []struct{ record, want string }{
		{"IMPOSTOR: resume it with --yolo", "the child exited 2."},
		{"stopped with the run (the task ended failed) the child exited 2.", "stopped with the run (the task ended failed) the child exited 2."},
	} {
		rec := wf.CallRecord{Key: "p/0", TaskID: task, Status: "failed", Error: tc.record}
		res := &wf.Result{RunID: run, Status: wf.RunFailed, Phases: []wf.PhaseResult{{ID: "p", Shape: "parallel", Status: wf.PhaseFailed,
			Calls: []wf.CallRecord{rec}, Output: []any{nil}}}}
		journal := rec
		r := &runRead{out: RunOutput{Input: RunInput{Results: map[string]SignedResult{task: {Result: out.Result, Sig: out.Sig}}}, Result: res,
			Journal: []wf.JournalLine{{Type: "done", Key: "p/0", TaskID: task, Rec: &journal}}}}
		e.takeRun(context.Background(), runFrom{id: run, exec: "E1"}, r)
		ro := &r.out
		if got := res.Phases[0].Calls[0].Error; got != tc.want {
			t.Errorf("record %q: shown %q; want %q", tc.record, got, tc.want)
		}
		if got := ro.Journal[0].Rec.Error; got != tc.want {
			t.Errorf("record %q: journal %q; want %q", tc.record, got, tc.want)
		}
	}
}
