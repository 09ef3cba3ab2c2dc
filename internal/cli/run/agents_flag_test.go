package run_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// sessionAgentScript: the root hands a review to rev, the agent --agents
// defines; rev says whether its system prompt is the one --agents gave.
const sessionAgentScript = `agents:
  root:
    - tools:
        - Task: {subagent_type: rev, description: "review", prompt: "Review the README."}
    - say: "root: {{trunc 400 (result 0)}}"
  rev:
    - say: "## What I did\nReviewed.\n## What I found\n{{if match \"SESSION-REVIEWER\" .System}}rev has the --agents prompt{{else}}rev has another prompt{{end}}\n## Files changed\nnone\n## Problems\nnone"
`

// TestAgentsFlag: --agents defines agents for the run as Claude Code's
// JSON does: the root can hand work to them, their prompt is the
// child's system prompt, they beat an agent file of the same name and
// are listed in stream-json's init line; a field missing or of the wrong
// type stops the run with exit 1 and one line naming the file (or
// "--agents JSON"), the agent and the field; a
// built-in's name is refused with the shadow warning.
func TestAgentsFlag(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "agents", "rev.md"), "---\nname: rev\ndescription: the file's rev\ntools: Read\n---\nFILE-REVIEWER\n")
	mdl := p.Script("s.yaml", sessionAgentScript)
	agents := `{"rev":{"description":"Reviews code","prompt":"You are SESSION-REVIEWER.","tools":["Read","Grep"],"model":"inherit"}}`
	code, out, errOut := p.Brood("-p", "--model", mdl, "--agents", agents, "go")
	if code != 0 || !strings.Contains(out, "rev has the --agents prompt") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "--agents: accepted") {
		t.Errorf("--agents still prints a note:\n%s", errOut)
	}
	// The same from a file, and listed in the init line.
	file := filepath.Join(p.Root, "agents.json")
	clitest.WriteFile(t, file, agents)
	code, out, errOut = p.Brood("-p", "--model", mdl, "--agents", file, "--output-format", "stream-json", "go")
	if code != 0 || !strings.Contains(out, "rev has the --agents prompt") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], `"rev"`) {
		t.Fatalf("--agents FILE: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	clitest.WriteFile(t, filepath.Join(p.Root, "bad.json"), `{"rev":{"prompt":"x","tools":"Read"}}`)
	clitest.WriteFile(t, filepath.Join(p.Root, "list.json"), `[1]`)
	for _, tc := range []struct{ name, json, want string }{
		{"no description", `{"rev":{"prompt":"x"}}`, `--agents JSON: agent "rev": description is required`},
		{"no prompt", `{"rev":{"description":"d"}}`, `--agents JSON: agent "rev": prompt is required`},
		{"tools not a list", `{"rev":{"description":"d","prompt":"p","tools":"Read"}}`, `--agents JSON: agent "rev": tools must be a list of texts, not a text`},
		{"model a number", `{"rev":{"description":"d","prompt":"p","model":4}}`, `--agents JSON: agent "rev": model must be a text, not a number`},
		{"not an object", `["rev"]`, `--agents JSON: a JSON array, not an object of agents`},
		{"not JSON", `{"rev":`, `--agents JSON: not a JSON object of agents (`},
		{"two agents", `{"a":{"prompt":"x"},"b":{"description":"d","prompt":"p","maxTurns":"x"}}`,
			`--agents JSON: agent "a": description is required (a non-empty text) · --agents JSON: agent "b": maxTurns must be a whole number, not a text`},
		{"two fields", `{"rev":{"prompt":"x","tools":"Read"}}`, `--agents JSON: agent "rev": tools must be a list of texts, not a text; description is required`},
		{"a file", filepath.Join(p.Root, "bad.json"), filepath.Join(p.Root, "bad.json") + `: agent "rev": tools must be a list of texts, not a text; description is required`},
		{"a file not an object", filepath.Join(p.Root, "list.json"), filepath.Join(p.Root, "list.json") + `: a JSON array, not an object of agents`},
		{"no such file", `nope.json`, `--agents: open nope.json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := p.Brood("-p", "--model", mdl, "--agents", tc.json, "go")
			if code != 1 || !strings.Contains(errOut, "brood: "+tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, errOut, tc.want)
			}
			// One line, the program named once.
			if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || strings.Count(errOut, "brood:") != 1 || strings.Contains(errOut, "error:") {
				t.Errorf("want one line saying brood once, and no error: label, got:\n%s", errOut)
			}
		})
	}
	// A built-in's name is not taken: the shadow warning says so.
	code, _, errOut = p.Brood("-p", "--model", p.Script("e.yaml", echoScript), "--agents", `{"explore":{"description":"mine","prompt":"p"}}`, "go")
	if code != 0 || !strings.Contains(errOut, `"explore" is a built-in agent and can't be redefined`) {
		t.Errorf("a built-in's name: exit %d, stderr:\n%s", code, errOut)
	}
}
