package workflow

import (
	"slices"
	"strings"
	"testing"
)

// TestSchemaErrorsNameFileLineAndField: every way a plan breaks the schema
// is reported at its file, line and field, with what to do (the messages
// the plan checker gave on its previous JSON Schema library, kept).
func TestSchemaErrorsNameFileLineAndField(t *testing.T) {
	for _, tc := range []struct {
		name, plan string
		want       []string
	}{
		{"patterns, enums, minimums", "name: x\nphases:\n  - id: 1a\n    parallel: [{agent: e, prompt: \"\", max_turns: 0, timeout: 5x, isolation: box}]\n", []string{
			"plan.yaml:3: phases[0].id: '1a' does not match pattern '^[A-Za-z_][A-Za-z0-9_-]*$'",
			"plan.yaml:4: phases[0].parallel[0].isolation: value must be one of 'worktree', 'none'",
			"plan.yaml:4: phases[0].parallel[0].max_turns: minimum: got 0, want 1",
			"plan.yaml:4: phases[0].parallel[0].prompt: minLength: got 0, want 1",
			"plan.yaml:4: phases[0].parallel[0].timeout: '5x' does not match pattern '^[0-9.]+(ns|us|ms|s|m|h)([0-9.]+(ns|us|ms|s|m|h))*$'",
		}},
		{"unknown top-level field", "name: x\ncolor: 3\nphases:\n  - id: a\n    parallel: [{agent: e, prompt: p}]\n", []string{"plan.yaml:2: color: no such field"}},
		{"oneOf accept", "name: x\nphases:\n  - id: a\n    votes: {agent: e, prompt: p, count: 3, field: f, accept: {at_least: 0}, schema: 3}\n", []string{
			"plan.yaml:4: phases[0].votes.accept: value must be one of 'majority', 'unanimous'",
			"plan.yaml:4: phases[0].votes.accept.at_least: minimum: got 0, want 1",
			"plan.yaml:4: phases[0].votes.schema: got number, want object",
		}},
		{"empty phases", "name: x\nphases: []\n", []string{"plan.yaml:2: phases: minItems: got 0, want 1"}},
		{"missing properties", "phases:\n  - id: a\n    parallel: [{prompt: p}]\n", []string{
			"plan.yaml:1: missing property 'name'",
			"plan.yaml:3: phases[0].parallel[0]: missing property 'agent'",
		}},
		{"inputs and shape", "name: x\ninputs: {a: {type: foo, colour: 1}}\nphases:\n  - id: a\n    each: x\n    parallel: [{agent: e, prompt: p}]\n", []string{
			"plan.yaml:2: inputs.a.type: value must be one of 'string', 'number', 'boolean', 'list', 'json'",
			"plan.yaml:2: inputs.a.colour: no such field",
			"plan.yaml:4: phases[0]: a phase has exactly one shape: parallel, each (with stages), until_quiet or votes",
		}},
		{"integer and required", "name: x\nconcurrency: 1.5\nphases:\n  - id: a\n    until_quiet: {agent: e, prompt: p}\n", []string{
			"plan.yaml:2: concurrency: got number, want integer",
			"plan.yaml:5: phases[0].until_quiet: missing properties 'key', 'schema'",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("plan.yaml", []byte(tc.plan))
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.Split(err.Error(), "\n")
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestPlanSchemaCompiles: the embedded schema resolves on the library.
func TestPlanSchemaCompiles(t *testing.T) {
	if _, err := planSchema(); err != nil {
		t.Fatal(err)
	}
}
