package temporal_test

// Issue 26, review25 P1-8: a worker's signed result names the call it
// answers (the plan call's key, its number, its input's digest), so
// whoever completes a plan's workflow cannot take a genuine result for
// another call of the run: not by swapping two results between calls, nor
// by copying one ballot onto every ballot key of a votes phase.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// rebind is a stand-in for the run's workflow: brood's own PlanWorkflow
// on the fleet's queue q, whose first phase's records edit rewrites
// before it completes the run (keys kept), polling queue standIn.
func rebind(t *testing.T, standIn, q string, edit func([]wf.CallRecord)) {
	t.Helper()
	sw := sdkworker.New(sharedServer(t).Client(t), standIn, sdkworker.Options{})
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		in.Queue = q
		out, err := temporal.PlanWorkflow(w, in)
		if out != nil && out.Result != nil && len(out.Result.Phases) > 0 {
			cs := out.Result.Phases[0].Calls
			keys := make([]string, len(cs))
			for i := range cs {
				keys[i] = cs[i].Key
			}
			edit(cs)
			for i := range cs {
				cs[i].Key = keys[i]
			}
		}
		return out, err
	}, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Stop)
}

const swapScript = `
agents:
  explore:
    - cases:
        - if: "ALPHA"
          say: "alpha-answer"
      say: "beta-answer"
`

// TestResultsAreTakenForTheirOwnCall (review25 TestRV25KeySwap): a real
// brood worker answers a plan's two calls; a stand-in completes the run
// with the two genuine records swapped between the calls, or the first
// copied onto the second (keys kept). The submitter refuses every record
// whose result its worker signed for another call (and one naming a task
// another call's record names), so the phase's output is never the
// stand-in's choice: honest, it is the calls' own answers in order.
func TestResultsAreTakenForTheirOwnCall(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, swapScript, store, 2, "")
	plan := "name: p\nphases:\n  - id: a\n    parallel: [{agent: explore, prompt: \"ALPHA\"}, {agent: explore, prompt: \"BETA\"}]\n"
	for _, tc := range []struct {
		name    string
		edit    func([]wf.CallRecord)
		output  string
		refused []bool
		why     string
	}{
		{"honest", func([]wf.CallRecord) {}, `["alpha-answer","beta-answer"]`, []bool{false, false}, ""},
		{"swapped", func(cs []wf.CallRecord) { cs[0], cs[1] = cs[1], cs[0] }, "", []bool{true, true}, "whose worker signed its result for call a/"},
		{"the first copied onto the second", func(cs []wf.CallRecord) { cs[1] = cs[0] }, "", []bool{false, true}, "a/1 names task "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			standIn := q + "-" + strings.ReplaceAll(tc.name, " ", "-")
			rebind(t, standIn, q, tc.edit)
			eng, _ := trustingEngine(t, standIn, submitterRepo(t), store, fleetWorkerPub())
			res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, plan), Source: "plan.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			ph := res.Phases[0]
			got, _ := json.Marshal(ph.Output)
			for i, c := range ph.Calls {
				o, _ := json.Marshal(c.Output)
				if refused := c.Status == "failed" && c.Output == nil; refused != tc.refused[i] || refused && !strings.Contains(c.Error, tc.why) {
					t.Errorf("record %s (task %s): %s, output %s, error %q; want refused %v (%q)", c.Key, c.TaskID, c.Status, o, c.Error, tc.refused[i], tc.why)
				}
				if c.Status == wf.CallDone && string(o) != []string{`"alpha-answer"`, `"beta-answer"`}[i] {
					t.Errorf("record %s taken with output %s: another call's answer", c.Key, o)
				}
			}
			if tc.output != "" && string(got) != tc.output {
				t.Errorf("phase a output %s; want %s", got, tc.output)
			}
			if strings.Contains(string(got), `"beta-answer","alpha-answer"`) || strings.Contains(string(got), `"alpha-answer","alpha-answer"`) {
				t.Errorf("phase a output %s: the stand-in's choice", got)
			}
		})
	}
}

const ballotScript = `
agents:
  explore:
    - cases:
        - if: "vote 1"
          say: "` + "```json\\n{\\\"choice\\\": \\\"A\\\"}\\n```" + `"
      say: "` + "```json\\n{\\\"choice\\\": \\\"B\\\"}\\n```" + `"
`

// TestBallotsAreNotStuffed (review25 TestRV25BallotStuffing): a real
// brood worker casts a votes phase's three ballots (the first A, the
// others B); a stand-in completes the run with the first ballot's genuine
// record copied onto the other ballot keys. The copies are refused, so
// the submitter's own aggregate is never the stand-in's unanimous A:
// honest, it is B by two to one.
func TestBallotsAreNotStuffed(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, ballotScript, store, 3, "")
	stuff := func(cs []wf.CallRecord) {
		for i := range cs {
			if b, _ := json.Marshal(cs[i].Output); string(b) == `{"choice":"A"}` {
				a := cs[i]
				for k := range cs {
					cs[k] = a
				}
				return
			}
		}
	}
	for _, tc := range []struct {
		name  string
		edit  func([]wf.CallRecord)
		tally string
	}{
		{"honest", func([]wf.CallRecord) {}, `{"\"A\"":1,"\"B\"":2}`},
		{"stuffed", stuff, `{"\"A\"":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			standIn := q + "-" + tc.name
			rebind(t, standIn, q, tc.edit)
			eng, _ := trustingEngine(t, standIn, submitterRepo(t), store, fleetWorkerPub())
			res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, votePlan), Source: "plan.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			ph := res.Phases[0]
			got, _ := json.Marshal(ph.Output)
			var agg struct {
				Tally json.RawMessage `json:"tally"`
			}
			_ = json.Unmarshal(got, &agg)
			if ph.Output != nil && string(agg.Tally) != tc.tally {
				t.Errorf("ballot output %s (phase %s); want tally %s", got, ph.Status, tc.tally)
			}
			if tc.name == "honest" && ph.Output == nil {
				t.Errorf("ballot phase %s with no output; want B by two to one", ph.Status)
			}
			for _, c := range ph.Calls {
				if o, _ := json.Marshal(c.Output); c.Status == wf.CallDone && c.Key != "ballot/v1" && string(o) == `{"choice":"A"}` {
					t.Errorf("record %s (task %s) taken with ballot 1's vote", c.Key, c.TaskID)
				}
			}
		})
	}
}
