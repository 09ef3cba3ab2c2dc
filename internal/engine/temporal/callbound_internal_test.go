package temporal

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestPlanCallBound: the most calls a signed run may start is the plan's
// count when nothing depends on outputs, the most its shape starts
// (until_quiet at its max_rounds) otherwise, and the plan's max_agents
// (or the default) for an each over outputs; never more than max_agents.
// Sign states it in the submission, and a submission from before bounds
// gets the same from its plan.
func TestPlanCallBound(t *testing.T) {
	c := wf.Call{Agent: "explore", Prompt: "p"}
	for _, tc := range []struct {
		name   string
		plan   wf.Plan
		inputs map[string]any
		want   int
	}{
		{"three in parallel", wf.Plan{Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{c, c, c}}}}, nil, 3},
		{"each over an input's list, two stages", wf.Plan{Phases: []wf.Phase{{ID: "a", Each: "inputs.files", Stages: []wf.Call{c, c}}}},
			map[string]any{"files": []any{"x", "y", "z"}}, 6},
		{"votes and parallel", wf.Plan{Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{c}}, {ID: "b", Votes: &wf.Votes{Call: c, Count: 5}}}}, nil, 6},
		{"until_quiet at its max_rounds", wf.Plan{Phases: []wf.Phase{{ID: "a", UntilQuiet: &wf.UntilQuiet{Call: c, Key: "k", MaxRounds: 4, PerRound: 2}}}}, nil, 8},
		{"each over outputs: the default cap", wf.Plan{Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{c}}, {ID: "b", Each: "a.output.items", Stages: []wf.Call{c}}}}, nil, wf.DefaultMaxAgents},
		{"each over outputs: the plan's max_agents", wf.Plan{MaxAgents: 40, Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{c}}, {ID: "b", Each: "a.output.items", Expect: 3, Stages: []wf.Call{c}}}}, nil, 40},
		{"capped by max_agents", wf.Plan{MaxAgents: 2, Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{c, c, c}}}}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlanCallBound(&tc.plan, tc.inputs); got != tc.want {
				t.Errorf("PlanCallBound: %d, want %d", got, tc.want)
			}
			old := Submission{Kind: "plan", Plan: &tc.plan, Inputs: tc.inputs}
			if got := old.callBound(); got != tc.want {
				t.Errorf("a submission from before bounds: %d, want %d", got, tc.want)
			}
			s, err := seeded(3).Sign(Submission{Kind: "plan", Workflow: "R", Queue: "q", Plan: &tc.plan, Inputs: tc.inputs, At: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			var sub Submission
			if err := json.Unmarshal(s.Payload, &sub); err != nil || sub.MaxCalls != tc.want {
				t.Errorf("the signed bound: %d (%v), want %d", sub.MaxCalls, err, tc.want)
			}
		})
	}
	s, _ := seeded(3).Sign(Submission{Kind: "call", Workflow: "brood-call-T", Queue: "q", At: time.Now()})
	var sub Submission
	if err := json.Unmarshal(s.Payload, &sub); err != nil || sub.MaxCalls != 1 {
		t.Errorf("a single call's signed bound: %d (%v), want 1", sub.MaxCalls, err)
	}
}

// TestUnboundedSubmissionNeedsNoNumber (review23 P2-4): a call of a
// submission from before bounded runs (it signs no max_calls) is admitted
// with no number, as its workflow scheduled it before the upgrade; a
// submission that signs a bound needs one, and the refusal says to
// upgrade every worker and resume the run.
func TestUnboundedSubmissionNeedsNoNumber(t *testing.T) {
	user := seeded(4)
	trust := NewTrust()
	if err := trust.Add(user.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	old, err := json.Marshal(Submission{Version: 1, Kind: "call", Workflow: "brood-call-T", Queue: "q", At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	legacy := &Signed{Payload: old, Key: user.key.Public().(ed25519.PublicKey), Sig: ed25519.Sign(user.key, append([]byte(signContext), old...))}
	bounded, err := user.Sign(Submission{Kind: "call", Workflow: "brood-call-T", Queue: "q", At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{Trust: trust, Store: &DirStore{Dir: t.TempDir()}}
	if err := a.admitSeq(context.Background(), CallInput{Signed: legacy}, "E1", "1", 1); err != nil {
		t.Errorf("a call of a submission from before bounds: %v; want admitted", err)
	}
	err = a.admitSeq(context.Background(), CallInput{Signed: bounded}, "E1", "1", 1)
	if err == nil || !strings.Contains(err.Error(), "upgrade every worker, then brood workflow resume brood-call-T") {
		t.Errorf("an unnumbered call of a bounded submission: %v; want refused, saying to upgrade and resume", err)
	}
}
