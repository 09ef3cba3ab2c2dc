package workflow_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// shapesScript answers by the first line of each call's prompt (a child's
// first user turn is "Begin: <plan>: <that line>"), and reads an earlier
// agent's value from the untrusted block of its brief (in .System).
var shapesScript = `
agents:
  explore:
    - cases:
        - if: "find files"
          say: |
` + indent(fence(`{"files": ["a.go", "b.go", "bad.go"]}`), 12) + `
        - if: "shapes: verify"
          say: |
` + indent(fence(`{"ok": true, "what": "verified {{match "from=\"fixed.fixed\" trust=\"untrusted\">\\s+([^\\n]+)" .System}}"}`), 12) + `
        - if: "shapes: fix"
          say: |
            {{if match "bad\\.go" .System}}no answer{{else}}
` + indent(fence(`{"fixed": "fix {{match "from=\"file\" trust=\"untrusted\">\\s+(\\S+)" .System}}"}`), 12) + `
            {{end}}
        - if: "hunt round 1"
          say: |
` + indent(fence(`{"findings": [{"id": "A"}, {"id": "B"}]}`), 12) + `
        - if: "hunt round 2"
          say: |
` + indent(fence(`{"findings": [{"id": "B"}, {"id": "C"}]}`), 12) + `
        - if: "hunt round"
          say: |
` + indent(fence(`{"findings": [{"id": "A"}]}`), 12) + `
        - if: "decide vote 3"
          say: |
` + indent(fence(`{"choice": "sqlite"}`), 12) + `
        - if: "decide vote"
          say: |
` + indent(fence(`{"choice": "postgres"}`), 12) + `
        - if: "crash now"
          exit: 3
      say: "plain answer"
`

const shapesPlan = `
name: shapes
phases:
  - id: find
    parallel:
      - id: found
        agent: explore
        prompt: "find files"
        schema: {type: object, properties: {files: {type: array, items: {type: string}}}, required: [files]}
  - id: fix
    each: found.files[*]
    as: file
    stages:
      - id: fixed
        agent: explore
        prompt: "fix {{file}}"
        schema: {type: object, required: [fixed]}
      - agent: explore
        prompt: "verify {{fixed.fixed}}"
        schema: {type: object, required: [ok]}
  - id: hunt
    depends_on: []
    until_quiet:
      agent: explore
      prompt: "hunt round {{round}}"
      schema: {type: object, required: [findings]}
      key: id
      max_rounds: 6
  - id: decide
    depends_on: []
    votes:
      agent: explore
      prompt: "decide vote {{vote}}"
      schema: {type: object, required: [choice]}
      count: 3
      field: choice
      accept: majority
  - id: report
    depends_on: [fix, hunt, decide]
    parallel:
      - id: summary
        agent: explore
        prompt: "report {{decide.value}}\nFINDINGS {{hunt[*].id}}\nVERIFIED {{fix[*].what}}"
`

// TestEveryShapeEndToEnd runs a plan with each shape, in waves, through
// real child processes, and checks outputs, templates and counts.
func TestEveryShapeEndToEnd(t *testing.T) {
	p := newProject(t, shapesScript)
	res, code, stderr := p.run(p.plan("shapes.yaml", shapesPlan))
	if code != 0 || res.Status != wf.RunDone {
		t.Fatalf("exit %d status %s (%s)\n%s", code, res.Status, res.Reason, stderr)
	}
	if got := js(res.Outputs["found"]); got != `{"files":["a.go","b.go","bad.go"]}` {
		t.Errorf("find: %s", got)
	}
	fix := phase(t, res, "fix")
	out, _ := fix.Output.([]any)
	if len(out) != 3 || out[2] != nil || len(fix.Calls) != 5 {
		t.Fatalf("fix: output %s with %d calls; want two verified items, null for bad.go (its pipeline stopped), 5 calls", js(fix.Output), len(fix.Calls))
	}
	if st := fix.Calls[4].Status; fix.Calls[4].Key != "fix/2/fixed" || st != wf.CallInvalid {
		t.Errorf("fix of bad.go: %s %s; want invalid (no JSON answer)", fix.Calls[4].Key, st)
	}
	if m, _ := out[0].(map[string]any); !strings.Contains(js(m["what"]), "fix a.go") {
		t.Errorf("fix[0] = %s; want the verify stage to have seen the fix stage's output", js(out[0]))
	}
	hunt := phase(t, res, "hunt")
	if js(hunt.Output) != `[{"id":"A"},{"id":"B"},{"id":"C"}]` || hunt.Rounds != 3 {
		t.Errorf("hunt: %s after %d rounds; want A, B, C after 3 (the third added nothing)", js(hunt.Output), hunt.Rounds)
	}
	dec := phase(t, res, "decide")
	if m, _ := dec.Output.(map[string]any); m["accepted"] != true || m["value"] != "postgres" || m["yes"] != 2.0 {
		t.Errorf("decide: %s; want postgres accepted 2 of 3", js(dec.Output))
	}
	if res.Agents != 13 {
		t.Errorf("agents %d, want 13", res.Agents)
	}
	// The report's brief is the template rendered over every earlier output.
	rep := phase(t, res, "report")
	var env dispatch.Envelope
	if err := dispatch.ReadJSON(filepath.Join(dispatch.Dir(p.Root, rep.Calls[0].TaskID), dispatch.EnvelopeFile), &env); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"report \n<subagent-result from=\"decide.value\" trust=\"untrusted\">\npostgres\n", `"A"`, `"C"`, "verified fix b.go"} {
		if !strings.Contains(env.Brief, want) {
			t.Errorf("the report's brief lacks %q:\n%s", want, env.Brief)
		}
	}
	if strings.Contains(stderr, "plain answer") || strings.Contains(stderr, "postgres") {
		t.Errorf("a child's words reached stderr (progress must be counts only):\n%s", stderr)
	}
	if !strings.Contains(stderr, "phase hunt (until_quiet) done") {
		t.Errorf("no progress line for phase hunt:\n%s", stderr)
	}
}

// TestWavesSkipOnlyDependants: a failed phase skips the phases that depend
// on it and nothing else; a failed task skips its dependants within the
// phase; the result says what was skipped and why.
func TestWavesSkipOnlyDependants(t *testing.T) {
	p := newProject(t, shapesScript)
	res, code, _ := p.run(p.plan("waves.yaml", `
name: waves
phases:
  - id: a
    parallel: [{agent: explore, prompt: "crash now"}]
  - id: b
    parallel: [{agent: explore, prompt: "after a {{a}}"}]
  - id: c
    depends_on: []
    parallel:
      - {id: t1, agent: explore, prompt: "crash now"}
      - {id: t2, agent: explore, prompt: "needs t1 {{t1}}", depends_on: [t1]}
      - {id: t3, agent: explore, prompt: "independent"}
`))
	if code != 1 || res.Status != wf.RunPartial {
		t.Fatalf("exit %d status %s; want 1 and partial", code, res.Status)
	}
	if st := phase(t, res, "b").Status; st != wf.PhaseSkipped {
		t.Errorf("b is %s, want skipped", st)
	}
	why := map[string]string{}
	for _, s := range res.Skipped {
		why[s.ID] = s.Reason
	}
	if !strings.Contains(why["b"], "phase a, which failed") || !strings.Contains(why["t2"], "task t1") || len(why) != 2 {
		t.Errorf("skipped %+v; want b (phase a failed) and t2 (task t1)", res.Skipped)
	}
	if got := js(phase(t, res, "c").Output); got != `[null,null,"plain answer"]` {
		t.Errorf("c: %s", got)
	}
	if res.Agents != 3 {
		t.Errorf("agents %d, want 3 (a, t1, t3)", res.Agents)
	}
}

// TestSchemaRetries: an answer that does not validate goes back to the
// same task with what was wrong; after 2 retries the call yields null.
func TestSchemaRetries(t *testing.T) {
	p := newProject(t, `
agents:
  explore:
    - say: "I think the answer is forty-two."
    - cases:
        - if: "rejected"
          say: |
`+indent(fence(`{"answer": 42}`), 12)+`
      say: "still no JSON"
  stubborn:
    - say: "I will not write JSON."
    - say: "Still no JSON."
    - say: "Never."
`)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "stubborn.md"), "---\nname: stubborn\ndescription: never answers in JSON\ntools: Read\n---\nYou are stubborn.\n")
	res, _, _ := p.run(p.plan("retry.yaml", `
name: retry
phases:
  - id: p
    parallel:
      - {agent: explore, prompt: "give the answer", schema: {type: object, properties: {answer: {type: integer}}, required: [answer]}}
      - {agent: stubborn, prompt: "give the answer", schema: {type: object, required: [answer]}}
`))
	calls := phase(t, res, "p").Calls
	if calls[0].Attempts != 2 || js(calls[0].Output) != `{"answer":42}` {
		t.Errorf("explore: %d attempts, output %s (status %s, error %q); want 2 and {answer: 42}", calls[0].Attempts, js(calls[0].Output), calls[0].Status, calls[0].Error)
	}
	if calls[1].Attempts != 3 || calls[1].Output != nil || calls[1].Status != wf.CallInvalid || !strings.Contains(strings.Join(calls[1].Failures, " "), "after 2 retries") {
		t.Errorf("stubborn: %d attempts, output %s, failures %v (status %s, error %q); want 3, null, invalid (not done), 'after 2 retries'", calls[1].Attempts, js(calls[1].Output), calls[1].Failures, calls[1].Status, calls[1].Error)
	}
	if calls[0].TaskID == calls[1].TaskID {
		t.Error("two calls share a task")
	}
	// A retry resumes the same task, whose usage counts all of its runs:
	// the call's usage is the task's, not the runs added up again.
	tk, err := dispatch.LoadTask(p.Root, calls[0].TaskID)
	if err != nil || tk.Result == nil {
		t.Fatalf("task %s: %v", calls[0].TaskID, err)
	}
	if want := tk.Result.Usage.Add(tk.Result.ChildUsage); calls[0].Usage != want || want.Input == 0 {
		t.Errorf("the call's usage %+v; its task's (both runs) is %+v", calls[0].Usage, want)
	}
}
