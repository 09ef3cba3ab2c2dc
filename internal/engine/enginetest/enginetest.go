// Package enginetest is the contract every engine.Engine must meet, as a
// test suite: an engine's own tests call Run with a fixture that builds it
// over a fresh project whose agents are driven by the scripted model. The
// suite talks to the engine only through the interface, so it holds for a
// fleet as for the local pool.
package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/workflow"
)

// Script drives the suite's agents (the built-in explore agent). A child's
// first user turn is "Begin: <description>", and a workflow call's
// description is "<plan>: <first line of its prompt>", so each case keys on
// the prompt's first line.
const Script = `
agents:
  explore:
    - cases:
        - if: "interrupted"
          say: "picked up again and finished"
        - if: "list items"
          say: |
            ` + "```json" + `
            {"items": ["a", "b", "c", "d", "e"]}
            ` + "```" + `
        - if: "answer yes"
          say: |
            ` + "```json" + `
            {"answer": "yes"}
            ` + "```" + `
        - if: "crash now"
          exit: 3
        - if: "wait forever"
          say: "still thinking"
          delay: 1h
      say: "plain answer"
`

// Fixture builds the engine under test.
type Fixture struct {
	// New returns an engine over a fresh project whose model is script
	// (the scripted model's YAML).
	New func(t *testing.T, script string) engine.Engine
}

// Run runs the contract against the fixture's engine.
func Run(t *testing.T, fx Fixture) {
	t.Run("Call", func(t *testing.T) { testCall(t, fx) })
	t.Run("ParallelOrderAndNulls", func(t *testing.T) { testParallel(t, fx) })
	t.Run("ListShowResume", func(t *testing.T) { testListShowResume(t, fx) })
	t.Run("MaxAgents", func(t *testing.T) { testMaxAgents(t, fx) })
	t.Run("CancelAndResume", func(t *testing.T) { testCancel(t, fx) })
	t.Run("StatusesSayWhatHappened", func(t *testing.T) { testStatuses(t, fx) })
	t.Run("MaxTokensAcrossResume", func(t *testing.T) { testTokensAcrossResume(t, fx) })
}

// Plan parses a YAML plan or fails the test.
func Plan(t *testing.T, yaml string) *workflow.Plan {
	t.Helper()
	p, err := workflow.Parse("plan.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.Check(p, workflow.CheckOptions{File: "plan.yaml"}); err != nil {
		t.Fatal(err)
	}
	return p
}

func testCall(t *testing.T, fx Fixture) {
	eng := fx.New(t, Script)
	r, err := eng.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "answer yes", Description: "answer yes", Schema: []byte(`{"type":"object","required":["answer"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || string(r.Output) != `{"answer":"yes"}` || r.TaskID == "" {
		t.Fatalf("result %+v; want done with output {\"answer\":\"yes\"} and a task id", r)
	}
	if strings.ContainsAny(r.TaskID, "/\\") {
		t.Fatalf("task id %q looks like a path; ids are opaque", r.TaskID)
	}
	if _, err := eng.Call(context.Background(), call.Spec{Agent: "no-such-agent", Prompt: "x"}); err == nil {
		t.Fatal("a call of an unknown agent was not refused")
	}
}

func testParallel(t *testing.T, fx Fixture) {
	eng := fx.New(t, Script)
	p := Plan(t, `
name: order
phases:
  - id: p
    parallel:
      - {agent: explore, prompt: "first one"}
      - {agent: explore, prompt: "crash now"}
      - {agent: explore, prompt: "answer yes", schema: {type: object, required: [answer]}}
`)
	res, err := eng.Run(context.Background(), engine.RunRequest{Plan: p, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := res.Outputs["p"].([]any)
	if len(out) != 3 || out[0] != "plain answer" || out[1] != nil {
		t.Fatalf("outputs %#v; want [plain answer, null, {answer: yes}]", res.Outputs["p"])
	}
	if m, _ := out[2].(map[string]any); m["answer"] != "yes" {
		t.Fatalf("third output %#v", out[2])
	}
	if res.Status != workflow.RunDone || res.Agents != 3 {
		t.Fatalf("status %s agents %d; want done with 3 agents", res.Status, res.Agents)
	}
}

func testListShowResume(t *testing.T, fx Fixture) {
	eng := fx.New(t, Script)
	ctx := context.Background()
	p := Plan(t, `
name: listed
phases:
  - id: list
    parallel: [{id: l, agent: explore, prompt: "list items", schema: {type: object, required: [items]}}]
  - id: each
    each: l.items[*]
    stages: [{agent: explore, prompt: "item {{item}}"}]
`)
	var id string
	res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(s string) { id = s }})
	if err != nil {
		t.Fatal(err)
	}
	if id == "" || id != res.RunID {
		t.Fatalf("Started got %q, result says %q", id, res.RunID)
	}
	if res.Agents != 6 || res.Status != workflow.RunDone {
		t.Fatalf("agents %d status %s; want 6 done", res.Agents, res.Status)
	}
	runs, err := eng.List(ctx)
	if err != nil || len(runs) != 1 || runs[0].RunID != id || runs[0].Status != workflow.RunDone || runs[0].Done != 6 {
		t.Fatalf("List = %+v, %v", runs, err)
	}
	info, err := eng.Show(ctx, id)
	if err != nil || info.Result == nil || info.Result.Agents != 6 {
		t.Fatalf("Show = %+v, %v", info, err)
	}
	// Engine parity: whichever engine ran the plan, its result is kept in
	// the submitter's project (.brood/workflows/<run_id>/result.json), and
	// Show names that file.
	keptResult(t, info, id, 6)
	keptJournal(t, info, res)
	callsCounted(t, info, map[string]int{workflow.CallDone: 6})
	again, err := eng.Resume(ctx, id, nil)
	if err != nil || again.Agents != 6 || again.Status != workflow.RunDone {
		t.Fatalf("Resume of a finished run = %+v, %v; want it as it was", again, err)
	}
	if _, err := eng.Show(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Show of an unknown run: %v, want ErrNotFound", err)
	}
}

func testMaxAgents(t *testing.T, fx Fixture) {
	eng := fx.New(t, Script)
	p := Plan(t, `
name: capped
max_agents: 3
phases:
  - id: list
    parallel: [{id: l, agent: explore, prompt: "list items", schema: {type: object, required: [items]}}]
  - id: each
    each: l.items[*]
    stages: [{agent: explore, prompt: "item {{item}}"}]
`)
	res, err := eng.Run(context.Background(), engine.RunRequest{Plan: p, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Agents != 3 || res.Status != workflow.RunPartial || !strings.Contains(res.Reason, "max_agents") {
		t.Fatalf("agents %d status %s reason %q; want 3 agents, partial, max_agents", res.Agents, res.Status, res.Reason)
	}
}

func testCancel(t *testing.T, fx Fixture) {
	eng := fx.New(t, Script)
	ctx := context.Background()
	p := Plan(t, `
name: slow
phases:
  - id: p
    parallel:
      - {agent: explore, prompt: "first one"}
      - {agent: explore, prompt: "wait forever"}
`)
	var once sync.Once
	running := make(chan string, 1)
	var id string
	var mu sync.Mutex
	res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml",
		Started: func(s string) { mu.Lock(); id = s; mu.Unlock() },
		Events: func(e workflow.Event) {
			if e.Running > 0 && e.Done == 1 {
				once.Do(func() {
					mu.Lock()
					running <- id
					mu.Unlock()
					go func() { _ = eng.Cancel(ctx, id) }()
				})
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	<-running
	if res.Status != workflow.RunCancelled {
		t.Fatalf("status %s; want cancelled", res.Status)
	}
	again, err := eng.Resume(ctx, res.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := again.Outputs["p"].([]any)
	if again.Status != workflow.RunDone || len(out) != 2 || out[1] != "picked up again and finished" || again.Agents != 2 {
		t.Fatalf("after resume: status %s outputs %#v agents %d; want done, the slow call continued, 2 agents\ncalls: %+v", again.Status, again.Outputs["p"], again.Agents, again.Phases)
	}
	// The journal in the submitter's project is the whole run's: the call
	// that finished before the cancel and the one the resume continued.
	info, err := eng.Show(ctx, again.RunID)
	if err != nil {
		t.Fatal(err)
	}
	keptJournal(t, info, again)
}

// testStatuses: an output that never validates is invalid (not done), a
// call max_agents holds back is skipped (not failed), and an each over
// nothing says so; only done yields an output.
func testStatuses(t *testing.T, fx Fixture) {
	eng := fx.New(t, Script)
	p := Plan(t, `
name: statuses
max_agents: 3
inputs:
  none: {type: list, default: ""}
phases:
  - id: a
    parallel:
      - {agent: explore, prompt: "answer yes", schema: {type: object, required: [answer]}}
      - {agent: explore, prompt: "no json here", schema: {type: object, required: [answer]}}
  - id: l
    parallel: [{id: list, agent: explore, prompt: "list items", schema: {type: object, required: [items]}}]
  - id: b
    each: list.items[*]
    stages: [{agent: explore, prompt: "item {{item}}"}]
  - id: nothing
    depends_on: []
    each: inputs.none[*]
    stages: [{agent: explore, prompt: "item {{item}}"}]
`)
	in, err := workflow.ResolveInputs(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), engine.RunRequest{Plan: p, Source: "plan.yaml", Inputs: in})
	if err != nil {
		t.Fatal(err)
	}
	byPhase := map[string]workflow.PhaseResult{}
	for _, ph := range res.Phases {
		byPhase[ph.ID] = ph
	}
	if c := byPhase["a"].Calls[1]; c.Status != workflow.CallInvalid || c.Output != nil || !strings.Contains(c.Error, "does not validate") {
		t.Errorf("a call whose output never validates: status %s, output %v, error %q; want invalid, null, why", c.Status, c.Output, c.Error)
	}
	statuses := map[string]int{}
	for _, c := range byPhase["b"].Calls {
		statuses[c.Status]++
		if c.Status == workflow.CallSkipped && !strings.Contains(c.Error, "max_agents") {
			t.Errorf("skipped call: %q; want max_agents named", c.Error)
		}
	}
	if statuses[workflow.CallSkipped] != 5 || len(statuses) != 1 || byPhase["b"].Status != workflow.PhaseSkipped {
		t.Errorf("phase b %s: %v; want all 5 calls skipped by max_agents", byPhase["b"].Status, statuses)
	}
	if ph := byPhase["nothing"]; ph.Status != workflow.PhaseDone || !strings.Contains(ph.Reason, "gave no items") || !strings.Contains(res.Reason, "gave no items") {
		t.Errorf("an each over nothing: %s (%s), run reason %q; want it said", ph.Status, ph.Reason, res.Reason)
	}
	if res.Status != workflow.RunPartial || res.Agents != 3 {
		t.Errorf("status %s agents %d; want partial with 3", res.Status, res.Agents)
	}
	info, err := eng.Show(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	callsCounted(t, info, map[string]int{workflow.CallDone: 2, workflow.CallInvalid: 1})
	if info.Done != 2 || info.Failed != 1 {
		t.Errorf("Show counts %d done, %d failed; want 2 and 1 (the calls that started: a skipped call is not a failed one)", info.Done, info.Failed)
	}
}

// callsCounted: Show's calls (brood workflow show --json's "calls") count
// the calls that started by their status, the skipped ones aside, in the
// same JSON shape whichever engine ran the run.
func callsCounted(t *testing.T, info *engine.RunInfo, want map[string]int) {
	t.Helper()
	b, err := json.Marshal(info)
	var shown struct {
		Calls map[string]int `json:"calls"`
	}
	if err != nil || json.Unmarshal(b, &shown) != nil || !maps.Equal(shown.Calls, want) {
		t.Errorf("Show's calls are %v (%s); want %v", shown.Calls, b, want)
	}
}

// testTokensAcrossResume: what a run spent before it stopped counts
// against max_tokens after a resume, and in its totals.
func testTokensAcrossResume(t *testing.T, fx Fixture) {
	eng := fx.New(t, Script)
	ctx := context.Background()
	p := Plan(t, `
name: capped
max_tokens: 1
phases:
  - id: p
    parallel:
      - {id: s, agent: explore, prompt: "wait forever"}
      - {id: q, agent: explore, prompt: "first one"}
      - {id: after, agent: explore, prompt: "after {{q}}", depends_on: [q]}
`)
	var once sync.Once
	var mu sync.Mutex
	var id string
	res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml",
		Started: func(s string) { mu.Lock(); id = s; mu.Unlock() },
		Events: func(e workflow.Event) {
			if e.Running > 0 && e.Done == 1 {
				once.Do(func() {
					mu.Lock()
					run := id
					mu.Unlock()
					go func() { _ = eng.Cancel(ctx, run) }()
				})
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunCancelled {
		t.Fatalf("status %s; want cancelled", res.Status)
	}
	again, err := eng.Resume(ctx, res.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := again.Phases[0].Calls
	if again.Agents != 2 || calls[2].Status != workflow.CallSkipped || !strings.Contains(calls[2].Error, "max_tokens") {
		t.Fatalf("after resume: %d agents, the dependent call %s (%s); want 2 agents and it skipped by max_tokens", again.Agents, calls[2].Status, calls[2].Error)
	}
	sum := calls[0].Usage.Add(calls[1].Usage)
	if again.Usage != sum || sum.Input == 0 {
		t.Errorf("the run says %+v, its calls spent %+v", again.Usage, sum)
	}
}

// keptResult: the run's result.json in the submitter's project, named by
// ResultRef, holds the run's result.
func keptResult(t *testing.T, info *engine.RunInfo, id string, agents int) {
	t.Helper()
	want := filepath.Join(".brood", "workflows", id, "result.json")
	if !strings.HasSuffix(info.ResultRef, string(filepath.Separator)+want) {
		t.Fatalf("Show's ResultRef is %q; want the run's %s in the submitter's project", info.ResultRef, want)
	}
	b, err := os.ReadFile(info.ResultRef)
	var kept workflow.Result
	if err != nil || json.Unmarshal(b, &kept) != nil || kept.RunID != id || kept.Agents != agents || kept.Status != workflow.RunDone {
		t.Fatalf("the run's result.json: %v\n%s", err, b)
	}
}

// keptJournal: beside the run's result.json is its journal.jsonl, as the
// local engine keeps it: every call of the result started and ended under
// its task id with its status, and nothing else open or failed.
func keptJournal(t *testing.T, info *engine.RunInfo, res *workflow.Result) {
	t.Helper()
	lines, err := workflow.ReadJournal(filepath.Join(filepath.Dir(info.ResultRef), workflow.JournalFile))
	if err != nil {
		t.Fatalf("the run's journal.jsonl beside %s: %v", info.ResultRef, err)
	}
	ended := map[string]string{}
	for _, l := range lines {
		if l.Rec != nil {
			ended[l.Rec.TaskID] = l.Rec.Status
		}
	}
	_, done, failed, open := workflow.Summary(lines)
	if done != res.Agents || failed != 0 || open != 0 {
		t.Errorf("journal: %d done, %d failed, %d open; want the run's %d agents done", done, failed, open, res.Agents)
	}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			if c.TaskID != "" && ended[c.TaskID] != c.Status {
				t.Errorf("call %s (task %s) is %s in the result, %q in the journal", c.Key, c.TaskID, c.Status, ended[c.TaskID])
			}
		}
	}
}

// NotAppliedYieldsNothing is the engines' parity for a run whose writer's
// change did not land: every not-applied call's output is null, in its
// record, its phase's output (a parallel phase's entry) and the run's
// outputs (its phase's entry, its named task's), whichever engine ran it.
// It reports how many not-applied calls it checked.
func NotAppliedYieldsNothing(t *testing.T, res *workflow.Result) int {
	t.Helper()
	n := 0
	for _, ph := range res.Phases {
		list, _ := res.Outputs[ph.ID].([]any)
		for j, c := range ph.Calls {
			if c.Status != workflow.CallNotApplied {
				continue
			}
			n++
			if c.Output != nil {
				t.Errorf("call %s is not-applied with output %v; want null", c.Key, c.Output)
			}
			if ph.Shape == "parallel" && (j >= len(list) || list[j] != nil) {
				t.Errorf("outputs[%s] is %v: call %s (not-applied) has no null entry", ph.ID, res.Outputs[ph.ID], c.Key)
			}
			if id := strings.TrimPrefix(c.Key, ph.ID+"/"); res.Outputs[id] != nil && id != ph.ID {
				t.Errorf("outputs[%s] is %v; want null (call %s is not-applied)", id, res.Outputs[id], c.Key)
			}
		}
	}
	return n
}
