package temporal

import (
	"context"
	"crypto/ed25519"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestResumedPlanCallContinuesOnlyThePinnedExecution (issue 26,
// fleetverify 2): a resumed plan's call continues only the From its
// resume read and signed, pinned to that execution of the run. A From of
// the same task a trusted worker signed in another execution of the run
// (what whoever completes the resumed execution's workflow tasks could
// hand it) is refused; the resume drops such a From (the call starts over)
// rather than sign it.
func TestResumedPlanCallContinuesOnlyThePinnedExecution(t *testing.T) {
	user, worker := seeded(7), seeded(8)
	trust := NewTrust()
	if err := trust.Add(user.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	run := "pin-run"
	id := PlanTaskID(run, time.Now(), 0)
	lim := CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 2}
	info := CallInfo{Workflow: run, Run: "E2", Queue: "q", Heartbeat: 10 * time.Second, StartToClose: time.Minute + 14*time.Second, Attempt: 1}
	info.Submitter = Fingerprint(user.key.Public().(ed25519.PublicKey))
	from := func(execution string) Heartbeat {
		hb := Heartbeat{TaskID: id, Transcript: Ref{Key: "sha256/ab/" + strings.Repeat("ab", 32), Size: 9, SHA256: strings.Repeat("ab", 32)}, Position: 9}
		in := info
		in.Run = execution
		NewWorkerKeys(worker, nil).sign(in, &hb)
		return hb
	}
	read, other := from("E1"), from("E0")
	stopped := map[string]Heartbeat{id: read}
	if kept := readFroms(map[string]Heartbeat{id: other}, "E1", nil); len(kept) != 0 {
		t.Errorf("the resume kept a From signed in another execution: %v", kept)
	}
	if kept := readFroms(stopped, "E1", nil); len(kept) != 1 {
		t.Errorf("the resume dropped the From of the execution it read")
	}
	plan := &wf.Plan{Name: "ro", Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{{Agent: "explore", Prompt: "review the code"}}}}}
	signed, err := user.Sign(Submission{Kind: "plan", Workflow: run, Queue: "q", Plan: plan, Froms: FromPins(stopped),
		Limits: map[string]CallLimits{"": lim}, At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	spec := call.Spec{Agent: "explore", Prompt: "review the code", Parent: "workflow " + run, Description: "ro: review the code", TaskID: id}
	for _, tc := range []struct {
		name string
		from Heartbeat
		want string
	}{
		{"the pinned execution's", read, ""},
		{"another execution's", other, "not the one its run's resume read and signed"},
		{"the pinned one with its transcript swapped", func() Heartbeat { hb := read; hb.Position = 3; return hb }(), "not the one its run's resume read and signed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := tc.from
			err := trust.Admit(context.Background(), nil, CallInput{Spec: spec, Signed: signed, From: &from}, info)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("admitted or refused for another reason: %v; want %q", err, tc.want)
			}
		})
	}
}

// TestTwiceStoppedCallKeepsItsPinnedContinuation (issue 26, a call
// stopped in an execution earlier than the resumed one started over): a
// resume of an execution that never ran a stopped call keeps that call's
// continuation signed in the earlier execution when the execution read
// had it pinned by its own (this key's) submission; one it did not pin,
// or pinned otherwise, is still dropped.
func TestTwiceStoppedCallKeepsItsPinnedContinuation(t *testing.T) {
	worker := seeded(8)
	run := "pin-run"
	id := PlanTaskID(run, time.Now(), 0)
	info := CallInfo{Workflow: run, Queue: "q", Attempt: 1}
	from := func(execution string, pos int64) Heartbeat {
		hb := Heartbeat{TaskID: id, Transcript: Ref{Key: "sha256/ab/" + strings.Repeat("ab", 32), Size: 9, SHA256: strings.Repeat("ab", 32)}, Position: pos}
		in := info
		in.Run = execution
		NewWorkerKeys(worker, nil).sign(in, &hb)
		return hb
	}
	e1, e0 := from("E1", 9), from("E0", 4)
	for _, tc := range []struct {
		name string
		hb   Heartbeat
		pins map[string]string
		kept bool
	}{
		{"pinned by the execution read", e1, FromPins(map[string]Heartbeat{id: e1}), true},
		{"not pinned", e1, nil, false},
		{"another one pinned", e0, FromPins(map[string]Heartbeat{id: e1}), false},
		{"pinned for another task", e1, map[string]string{"other": fromPin(e1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := readFroms(map[string]Heartbeat{id: tc.hb}, "E2", tc.pins)
			if _, ok := kept[id]; ok != tc.kept {
				t.Errorf("kept %v; want %v", ok, tc.kept)
			}
		})
	}
}

// TestUncheckedStopsStartOver (review30 P2-1): a resume hands on a
// stopped call's continuation only when the run's workflow checked it
// against the input it scheduled (the bound-stops marker in the replay of
// the execution it read, for one signed there; the marker also required
// by that execution's start, for one an earlier execution left); a run
// without a worker set keeps all, and a heartbeat that carries nothing is
// kept whatever the run.
func TestUncheckedStopsStartOver(t *testing.T) {
	hb := func(task, run string) Heartbeat {
		return Heartbeat{TaskID: task, Transcript: Ref{Key: "sha256/01", Size: 3}, Position: 3, Signed: &WorkerSig{Run: run}}
	}
	stopped := map[string]Heartbeat{"here": hb("here", "E2"), "earlier": hb("earlier", "E1"), "bare": {TaskID: "bare"}}
	all := map[string]workflow.Version{}
	for change, v := range workflowChanges() {
		all[change] = workflow.Version(v)
	}
	without := map[string]workflow.Version{}
	for change, v := range all {
		if change != boundStopsVersion {
			without[change] = v
		}
	}
	oldStart := workflowChanges()
	delete(oldStart, boundStopsVersion)
	ws := &WorkerSet{Keys: [][]byte{make([]byte, ed25519.PublicKeySize)}}
	for _, tc := range []struct {
		name     string
		workers  *WorkerSet
		versions map[string]workflow.Version
		start    map[string]int
		kept     string
	}{
		{"checked", ws, all, workflowChanges(), "bare earlier here"},
		{"an old run", ws, without, oldStart, "bare"},
		{"an old run, no workflow marker asked", ws, nil, nil, "bare"},
		{"an old submitter's start, a current workflow", ws, all, oldStart, "bare here"},
		{"no worker set", nil, without, oldStart, "bare earlier here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runRead{versions: tc.versions, start: RunInput{Workers: tc.workers, Versions: tc.start}, exec: "E2"}
			got, n := uncheckedStops(stopped, r)
			var ids []string
			for id := range got {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			if strings.Join(ids, " ") != tc.kept || n != len(stopped)-len(got) {
				t.Errorf("kept %v (%d dropped); want %s", ids, n, tc.kept)
			}
		})
	}
	if s := startOver(2); s != "2 stopped call(s) are from before brood checked stopped calls' briefs: they start over" {
		t.Errorf("the resume says %q", s)
	}
}
