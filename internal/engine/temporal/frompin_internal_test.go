package temporal

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

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
