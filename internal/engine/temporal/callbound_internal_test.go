package temporal

import (
	"encoding/json"
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
