package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestDelegationHookPayloadIsClaudeCodes: a root's Task call reaches the
// user's PreToolUse and PostToolUse hooks as Claude Code 2.1.332's does
// (testdata/claude-code-2.1.332/PreToolUse.json, PostToolUse.json):
// tool_name "Agent", the same top-level keys and tool_input keys; and a
// matcher of either name, "Agent" (a Claude Code user's) or "Task" (a
// brood user's), selects it.
func TestDelegationHookPayloadIsClaudeCodes(t *testing.T) {
	refs := map[string]map[string]any{"PreToolUse": readRef(t, "PreToolUse"), "PostToolUse": readRef(t, "PostToolUse")}
	p := &project{clitest.NewProject(t)}
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), "---\nname: scout\ndescription: looks\ntools: Read\n---\nYou look.\n")
	spec := p.Script("agentname.yaml", `
agents:
  root:
    - tools:
        - Task: {subagent_type: scout, description: "Mock task 1", prompt: "look at the README"}
    - say: "root done"
  scout:
    - say: "scouted"
`)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\n")
	logs := t.TempDir()
	hook := func(name string) string {
		return "cat >> " + filepath.Join(logs, name) + "; echo >> " + filepath.Join(logs, name)
	}
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"hooks":{
"PreToolUse":[{"matcher":"Agent","hooks":[{"type":"command","command":"`+hook("agent.log")+`"}]},
  {"matcher":"Task","hooks":[{"type":"command","command":"`+hook("task.log")+`"}]}],
"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"`+hook("post.log")+`"}]}]}}`)
	code, out, errOut := p.Brood("run", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range []struct{ log, event string }{
		{"agent.log", "PreToolUse"}, {"task.log", "PreToolUse"}, {"post.log", "PostToolUse"},
	} {
		t.Run(c.log, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(logs, c.log))
			if err != nil {
				t.Fatalf("the %s hook did not run for the Task call: %v", c.event, err)
			}
			recs := clitest.JSONValues(t, string(data))
			if len(recs) != 1 {
				t.Fatalf("%d records, want the root's one delegation:\n%s", len(recs), data)
			}
			ref := refs[c.event]
			got := recs[0]
			if got["tool_name"] != ref["tool_name"] {
				t.Errorf("tool_name %v, Claude Code's is %v", got["tool_name"], ref["tool_name"])
			}
			if !slices.Equal(sortedKeys(got), sortedKeys(ref)) {
				t.Errorf("keys %v, Claude Code's %v", sortedKeys(got), sortedKeys(ref))
			}
			gi, _ := got["tool_input"].(map[string]any)
			ri, _ := ref["tool_input"].(map[string]any)
			if !slices.Equal(sortedKeys(gi), sortedKeys(ri)) || gi["subagent_type"] != "scout" {
				t.Errorf("tool_input %v, Claude Code's keys %v", gi, sortedKeys(ri))
			}
		})
	}
}

func readRef(t *testing.T, event string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "claude-code-2.1.332", event+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
