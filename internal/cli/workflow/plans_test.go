package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	wf "github.com/broodhq/brood/internal/workflow"
)

const listPlan = `name: listed
inputs:
  items: {type: list, default: "a,b,c"}
phases:
  - id: e
    each: inputs.items[*]
    stages: [{agent: explore, prompt: "item {{item}}"}]
`

// TestListDefaultIsParsedAsInput: a list input's default written as text
// is read by the same rule as --input, and an each over nothing says so.
func TestListDefaultIsParsedAsInput(t *testing.T) {
	p := newProject(t, resumeScript)
	plan := p.plan("listed.yaml", listPlan)
	for _, tc := range []struct {
		name   string
		args   []string
		agents int
	}{
		{"default", nil, 3},
		{"--input", []string{"--input", "items=x, y"}, 2},
		{"--input JSON", []string{"--input", `items=["x","y","z","w"]`}, 4},
	} {
		res, code, errs := p.run(append([]string{plan}, tc.args...)...)
		if code != 0 || res.Status != wf.RunDone || res.Agents != tc.agents {
			t.Errorf("%s: exit %d status %s, %d agents; want done with %d\n%s", tc.name, code, res.Status, res.Agents, tc.agents, errs)
		}
	}
	res, code, errs := p.run(plan, "--input", "items=")
	if code != 0 || res.Agents != 0 || !strings.Contains(res.Reason, "gave no items") {
		t.Errorf("an each over nothing: exit %d, %d agents, reason %q; want it said", code, res.Agents, res.Reason)
	}
	if !strings.Contains(errs, "has no items") {
		t.Errorf("no warning before the run that the each has no items:\n%s", errs)
	}
	code, out, _ := p.Brood(context.Background(), nil, "workflow", "validate", plan)
	if code != 0 || !strings.Contains(out, "3 agents") {
		t.Errorf("validate: exit %d\n%s\nwant the default's 3 items counted", code, out)
	}
}

// TestValidateChecksThePlanNotTheRun: inputs belong to a run, so a plan
// whose required input is not given validates, listing it; an each over a
// fixed list longer than max_agents does not.
func TestValidateChecksThePlanNotTheRun(t *testing.T) {
	p := newProject(t, resumeScript)
	vote, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "workflows", "design-vote.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan := p.plan("design-vote.yaml", string(vote))
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "validate", plan)
	if code != 0 || !strings.Contains(out, "valid") || !strings.Contains(out, "question (string, required): not given") {
		t.Errorf("validate design-vote: exit %d\n%s%s\nwant valid, listing the required input", code, out, errs)
	}
	code, out, _ = p.Brood(context.Background(), nil, "workflow", "validate", "--json", plan)
	var v struct {
		Valid  bool `json:"valid"`
		Inputs []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
			Given    bool   `json:"given"`
		} `json:"inputs"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || !v.Valid || len(v.Inputs) != 1 || !v.Inputs[0].Required || v.Inputs[0].Given {
		t.Errorf("validate --json: exit %d\n%s", code, out)
	}
	code, _, errs = p.Brood(context.Background(), nil, "workflow", "run", "--yes", plan)
	if code != 2 || !strings.Contains(errs, "--input question=") {
		t.Errorf("run without the required input: exit %d\n%s\nwant 2 (a usage error) saying what to pass", code, errs)
	}

	items := make([]string, 2500)
	for i := range items {
		items[i] = fmt.Sprintf("f%d.go", i)
	}
	big := p.plan("big.yaml", "name: big\nmax_agents: 1000\ninputs:\n  files: {type: list, default: ["+strings.Join(items, ", ")+"]}\nphases:\n  - id: review\n    each: inputs.files[*]\n    stages: [{agent: explore, prompt: \"review {{item}}\"}]\n")
	code, out, errs = p.Brood(context.Background(), nil, "workflow", "validate", big)
	if code != 1 || !strings.Contains(errs, "big.yaml:2: max_agents: the plan starts at least 2500 agents") {
		t.Errorf("validate an each over 2,500 fixed items under max_agents 1000: exit %d\n%s%s\nwant it refused at max_agents", code, out, errs)
	}
	code, out, errs = p.Brood(context.Background(), nil, "workflow", "validate", big, "--input", "files=a.go,b.go")
	if code != 0 || !strings.Contains(out, "2 agents") {
		t.Errorf("with two files given: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = p.Brood(context.Background(), nil, "workflow", "run", "--yes", big)
	if code != 1 || !strings.Contains(errs, "max_agents") || runDir(p) != "" {
		t.Errorf("run: exit %d\n%s\nwant it refused before any agent starts", code, errs)
	}
}

// lineOf is the 1-based line of the first line of text holding needle.
func lineOf(t *testing.T, text, needle string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, needle) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %q", needle)
	return 0
}

// TestPlanErrorsNameTheLine: every plan error, in every format, is
// file:line: field: message; names that do not exist get a did-you-mean;
// a bad command line is a usage error (exit 2).
func TestPlanErrorsNameTheLine(t *testing.T) {
	p := newProject(t, resumeScript)
	for _, tc := range []struct {
		file, body string
		at         string // the text on the line the error is at
		field      string
		want       string
	}{
		{"cycle.yaml", "name: c\nphases:\n  - id: a\n    depends_on: [b]\n    parallel: [{agent: explore, prompt: x}]\n  - id: b\n    parallel: [{agent: explore, prompt: y}]\n",
			"depends_on: [b]", "phases[0].depends_on", "depends_on forms a cycle: a → b → a"},
		{"template.yaml", "name: t\ninputs:\n  dir: {default: x}\nphases:\n  - id: a\n    parallel:\n      - agent: explore\n        prompt: \"look at {{inputz.dir}}\"\n",
			"prompt:", "phases[0].parallel[0].prompt", `did you mean "inputs"?`},
		{"agent.yaml", "name: t\nphases:\n  - id: a\n    parallel:\n      - prompt: x\n        agent: explor\n",
			"agent: explor", "phases[0].parallel[0].agent", `unknown agent "explor"; did you mean "explore"?`},
		{"cap.yaml", "name: t\nmax_agents: 2\nphases:\n  - id: a\n    parallel: [{agent: explore, prompt: x}, {agent: explore, prompt: y}, {agent: explore, prompt: z}]\n",
			"max_agents: 2", "max_agents", "the plan starts at least 3 agents"},
		{"field.yaml", "name: t\nphases:\n  - id: a\n    parallel:\n      - agnet: explore\n        prompt: x\n",
			"agnet:", "phases[0].parallel[0].agnet", `no such field; did you mean "agent"?`},
		{"depends.yaml", "name: t\nphases:\n  - id: scan\n    parallel: [{agent: explore, prompt: x}]\n  - id: b\n    depends_on: [scna]\n    parallel: [{agent: explore, prompt: y}]\n",
			"depends_on: [scna]", "phases[1].depends_on", `did you mean "scan"?`},
		{"syntax.yaml", "name: t\nphases:\n  - id: a\n    parallel: [{agent: explore, prompt: x}\n  - id: b\n",
			"", "", "not valid YAML"},
		{"plan.json", "{\n  \"name\": \"t\",\n  \"phases\": [\n    {\"id\": \"a\", \"parallel\": [\n      {\"agent\": \"explor\", \"prompt\": \"x\"}\n    ]}\n  ]\n}\n",
			`"agent": "explor"`, "phases[0].parallel[0].agent", `did you mean "explore"?`},
		{"broken.json", "{\n  \"name\": \"t\",\n  \"phases\": [\n    {\"id\": \"a\",, }\n  ]\n}\n",
			`"a",,`, "", "not valid JSON"},
		{"plan.toml", "name = \"t\"\n\n[[phases]]\nid = \"a\"\n\n[[phases.parallel]]\nprompt = \"x\"\nagent = \"explor\"\n",
			`agent = "explor"`, "phases[0].parallel[0].agent", `did you mean "explore"?`},
		{"cycle.toml", "name = \"t\"\n\n[[phases]]\nid = \"a\"\ndepends_on = [\"b\"]\nparallel = [{agent = \"explore\", prompt = \"x\"}]\n\n[[phases]]\nid = \"b\"\nparallel = [{agent = \"explore\", prompt = \"y\"}]\n",
			`depends_on = ["b"]`, "phases[0].depends_on", "depends_on forms a cycle"},
		{"broken.toml", "name = \"t\"\n[[phases]]\nid = = \"a\"\n",
			`id = = "a"`, "", "not valid TOML"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			file := p.plan(tc.file, tc.body)
			code, _, errs := p.Brood(context.Background(), nil, "workflow", "validate", file)
			prefix := tc.file + ":"
			if tc.at != "" {
				prefix += fmt.Sprint(lineOf(t, tc.body, tc.at)) + ": "
			}
			if tc.field != "" {
				prefix += tc.field + ": "
			}
			if code != 1 || !hasLine(errs, prefix, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and a line %q…%q", code, errs, prefix, tc.want)
			}
			if tc.at == "" && !regexp.MustCompile(regexp.QuoteMeta(tc.file)+`:\d+: not valid`).MatchString(errs) {
				t.Errorf("stderr:\n%s\nwant file:line: before the message", errs)
			}
			if regexp.MustCompile(`\[\d+:\d+\]`).MatchString(errs) {
				t.Errorf("a [line:column] is buried in the message:\n%s", errs)
			}
		})
	}
	plan := p.plan("in.yaml", "name: t\ninputs:\n  items: {type: list}\nphases:\n  - id: a\n    parallel: [{agent: explore, prompt: x}]\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "rn", plan}, `did you mean "run"?`},
		{[]string{"workflow", "run", "--yes", plan, "--input", "itmes=a"}, `did you mean "items"?`},
		{[]string{"workflow", "validate", plan, "--input", "novalue"}, "want name=value"},
	} {
		code, out, errs := p.Brood(context.Background(), nil, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("brood %s: exit %d\n%s%s\nwant 2 (usage) and %q", strings.Join(tc.args, " "), code, out, errs, tc.want)
		}
	}
}

// hasLine reports whether some line of s starts with prefix (after any
// "brood: " the CLI puts first) and holds want.
func hasLine(s, prefix, want string) bool {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimPrefix(l, "brood: ")
		l = strings.TrimPrefix(l, "Error: ")
		if strings.HasPrefix(l, prefix) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// TestValidateRefusesAnAliasBomb: a plan file of 700 bytes whose YAML
// aliases expand to 387 million nodes is refused with its file named, where
// decoding it ran the root out of memory.
func TestValidateRefusesAnAliasBomb(t *testing.T) {
	p := newProject(t, resumeScript)
	var b strings.Builder
	b.WriteString("a: &a [x,x,x,x,x,x,x,x,x]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s [%s]\n", n, n, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = n
	}
	b.WriteString("name: bomb\nphases: []\n")
	plan := p.plan("bomb.yaml", b.String())
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "validate", plan)
	if code != 1 || !strings.Contains(errs, "bomb.yaml:1: its YAML aliases expand to more than 16 MiB") {
		t.Errorf("validate an alias bomb: exit %d\n%s%s\nwant it refused, the file named", code, out, errs)
	}
}
