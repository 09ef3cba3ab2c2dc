package workflow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodYAML = `
name: review
inputs:
  dir: {default: internal}
phases:
  - id: list
    parallel:
      - id: pkgs
        agent: explore
        prompt: "List the packages in {{inputs.dir}}"
        schema: {type: object, properties: {packages: {type: array}}, required: [packages]}
  - id: review
    each: pkgs.packages[*]
    stages:
      - agent: explore
        prompt: "Review {{item}}"
`

func TestParseFormatsAgree(t *testing.T) {
	toml := `
name = "review"
[inputs.dir]
default = "internal"
[[phases]]
id = "list"
[[phases.parallel]]
id = "pkgs"
agent = "explore"
prompt = "List the packages in {{inputs.dir}}"
schema = {type = "object", properties = {packages = {type = "array"}}, required = ["packages"]}
[[phases]]
id = "review"
each = "pkgs.packages[*]"
[[phases.stages]]
agent = "explore"
prompt = "Review {{item}}"
`
	y, err := Parse("plan.yaml", []byte(goodYAML))
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Parse("plan.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(y)
	j, err := Parse("plan.json", b)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*Plan{"toml": tm, "json": j} {
		got, _ := json.Marshal(p)
		if string(got) != string(b) {
			t.Errorf("%s parses differently:\n%s\nwant\n%s", name, got, b)
		}
	}
	if _, err := Check(y, CheckOptions{File: "plan.yaml", Agents: []string{"explore"}}); err != nil {
		t.Fatal(err)
	}
}

func TestParseAndCheckErrorsNameTheProblem(t *testing.T) {
	for _, tc := range []struct{ name, plan, want string }{
		{"no shape", "name: x\nphases:\n  - id: a\n", "plan.yaml:3: phases[0]: a phase has exactly one shape"},
		{"two shapes", "name: x\nphases:\n  - id: a\n    parallel: [{agent: e, prompt: p}]\n    votes: {agent: e, prompt: p, count: 3, field: f, accept: majority, schema: {}}\n", "phases[0]"},
		{"unknown field", "name: x\nphases:\n  - id: a\n    parallel: [{agent: e, prompt: p, colour: red}]\n", "colour"},
		{"bad yaml", "name: [x\n", "not valid YAML"},
		{"cycle", "name: x\nphases:\n  - id: a\n    depends_on: [b]\n    parallel: [{agent: e, prompt: p}]\n  - id: b\n    depends_on: [a]\n    parallel: [{agent: e, prompt: p}]\n", "cycle: a → b → a"},
		{"task cycle", "name: x\nphases:\n  - id: a\n    parallel:\n      - {id: t1, agent: e, prompt: p, depends_on: [t2]}\n      - {id: t2, agent: e, prompt: p, depends_on: [t1]}\n", "cycle: t1 → t2 → t1"},
		{"unknown dep", "name: x\nphases:\n  - id: a\n    depends_on: [zz]\n    parallel: [{agent: e, prompt: p}]\n", `no phase is called "zz"`},
		{"later output", "name: x\nphases:\n  - id: a\n    parallel: [{agent: e, prompt: \"{{b}}\"}]\n  - id: b\n    parallel: [{agent: e, prompt: p}]\n", `"b" has not run yet`},
		{"unknown input", "name: x\nphases:\n  - id: a\n    parallel: [{agent: e, prompt: \"{{inputs.nope}}\"}]\n", `no input "nope"`},
		{"unknown agent", "name: x\nphases:\n  - id: a\n    parallel: [{agent: wizard, prompt: p}]\n", `unknown agent "wizard"`},
		{"bad schema", "name: x\nphases:\n  - id: a\n    parallel: [{agent: e, prompt: p, schema: {type: 7}}]\n", "schema"},
		{"unreachable vote", "name: x\nphases:\n  - id: a\n    votes: {agent: e, prompt: p, count: 3, field: f, accept: {at_least: 4}, schema: {}}\n", "never be reached"},
		{"over max_agents", "name: x\nmax_agents: 2\nphases:\n  - id: a\n    votes: {agent: e, prompt: p, count: 3, field: f, accept: majority, schema: {}}\n", "over max_agents 2"},
		{"duplicate id", "name: x\nphases:\n  - id: a\n    parallel: [{id: a, agent: e, prompt: p}]\n", "used twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("plan.yaml", []byte(tc.plan))
			if err == nil {
				_, err = Check(p, CheckOptions{File: "plan.yaml", Agents: []string{"e"}})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestEvenVoteWarns(t *testing.T) {
	p, err := Parse("p.yaml", []byte("name: x\nphases:\n  - id: a\n    votes: {agent: e, prompt: p, count: 4, field: f, accept: majority, schema: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(p, CheckOptions{File: "p.yaml"})
	if err != nil || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "even") {
		t.Fatalf("report %+v, %v; want one warning about an even count", rep, err)
	}
}

func TestSchemaFileIsTheEmbeddedOne(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "workflow.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != string(SchemaJSON) {
		t.Fatal("docs/workflow.schema.json differs from internal/workflow/workflow.schema.json: copy it over")
	}
}

func TestWaves(t *testing.T) {
	p, err := Parse("p.yaml", []byte(`
name: x
phases:
  - {id: a, depends_on: [], parallel: [{agent: e, prompt: p}]}
  - {id: b, depends_on: [], parallel: [{agent: e, prompt: p}]}
  - {id: c, depends_on: [a, b], parallel: [{agent: e, prompt: p}]}
  - {id: d, parallel: [{agent: e, prompt: p}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(p, CheckOptions{File: "p.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(rep.Waves)
	if string(got) != `[["a","b"],["c"],["d"]]` {
		t.Fatalf("waves %s", got)
	}
}
