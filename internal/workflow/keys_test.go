package workflow

import (
	"context"
	"testing"

	"github.com/broodhq/brood/internal/call"
)

// keysRunner answers every call done, with an output every phase of the
// test's plan takes.
type keysRunner struct{}

func (keysRunner) Call(_ context.Context, s call.Spec) (*call.Result, error) {
	return &call.Result{TaskID: s.TaskID, Status: "done", Summary: s.Prompt, Output: []byte(`{"findings": [], "pick": "a"}`)}, nil
}

// TestCallsOfKeyRoundTrip: every key form the executor builds (a
// parallel call by id and by index, an each's stage by id and by index,
// an until_quiet round's call, a ballot) parses back, by CallsOfKey, to
// the one call of the plan that ran under it; keys that only look like
// one name none.
func TestCallsOfKeyRoundTrip(t *testing.T) {
	p := mustPlan(t, `name: keys
inputs:
  items: {type: list, default: [x, y]}
phases:
  - id: par
    parallel:
      - {id: a, agent: explore, prompt: "par a"}
      - {agent: explore, prompt: "par 1"}
  - id: each
    each: inputs.items[*]
    stages:
      - {id: s, agent: explore, prompt: "stage s {{item}}"}
      - {agent: explore, prompt: "stage 1 {{prev}}"}
  - id: hunt
    until_quiet:
      agent: explore
      key: id
      prompt: "hunt"
      max_rounds: 2
      quiet_rounds: 1
      schema: {type: object, properties: {findings: {type: array, items: {type: object, properties: {id: {type: string}}, required: [id]}}}, required: [findings]}
  - id: ballot
    votes:
      count: 3
      field: pick
      agent: explore
      prompt: "vote"
      accept: majority
      schema: {type: object, properties: {pick: {type: string}}, required: [pick]}
`)
	in, err := ResolveInputs(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := Execute(context.Background(), p, Options{Runner: keysRunner{}, Inputs: in, Concurrency: 4, NewTaskID: ids()})
	want := map[string]*Call{
		"par/a": &p.Phases[0].Parallel[0], "par/1": &p.Phases[0].Parallel[1],
		"each/0/s": &p.Phases[1].Stages[0], "each/0/1": &p.Phases[1].Stages[1],
		"each/1/s": &p.Phases[1].Stages[0], "each/1/1": &p.Phases[1].Stages[1],
		"hunt/r1/0": &p.Phases[2].UntilQuiet.Call,
		"ballot/v1": &p.Phases[3].Votes.Call, "ballot/v2": &p.Phases[3].Votes.Call, "ballot/v3": &p.Phases[3].Votes.Call,
	}
	seen := map[string]bool{}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			seen[c.Key] = true
			got := CallsOfKey(p, c.Key)
			if len(got) != 1 || got[0] != want[c.Key] {
				t.Errorf("CallsOfKey(%q) = %v; want the call %v", c.Key, got, want[c.Key])
			}
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("the executor made no record keyed %q (records: %v)", k, seen)
		}
	}
	for _, k := range []string{"par/2", "par/01", "par/", "par", "nope/a", "each/s", "each/01/s", "each/0/2",
		"hunt/1/0", "hunt/r1", "hunt/r01/0", "hunt/r1/-1", "ballot/1", "ballot/v", "ballot/v01", "ballot/v+1", ""} {
		if got := CallsOfKey(p, k); len(got) != 0 {
			t.Errorf("CallsOfKey(%q) = %v; want none", k, got)
		}
	}
}
