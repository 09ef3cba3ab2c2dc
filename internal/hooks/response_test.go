package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

const responseScript = `
agents:
  root:
    - tools:
        - Bash: {command: "echo out; echo err >&2"}
    - tools:
        - Write: {file_path: notes.txt, content: "one\ntwo\n"}
    - tools:
        - Edit: {file_path: notes.txt, old_string: "two", new_string: "three"}
    - tools:
        - Read: {file_path: notes.txt}
    - tools:
        - Task: {subagent_type: scout, description: "scout it", prompt: "look around"}
    - say: "root done"
  scout:
    - say: "scouted"
`

// TestPostToolUseResponseIsClaudeCodes: through the real CLI, a
// PostToolUse hook reads tool_response in Claude Code's shape for each
// tool (Bash's stdout/stderr/interrupted/isImage/noOutputExpected, Read's
// file, Write's and Edit's filePath, the Agent's status and agentId), and
// PreToolUse, PostToolUse, Stop and SubagentStop carry effort as Claude
// Code's do, even with no effort asked for.
func TestPostToolUseResponseIsClaudeCodes(t *testing.T) {
	p := &project{clitest.NewProject(t)}
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), "---\nname: scout\ndescription: looks\ntools: Read\n---\nYou look.\n")
	spec := p.Script("resp.yaml", responseScript)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\n")
	log := filepath.Join(t.TempDir(), "hooks.log")
	cmd := `cat >> ` + log + `; echo >> ` + log
	var ev []string
	for _, e := range []string{"PreToolUse", "PostToolUse", "Stop", "SubagentStop"} {
		ev = append(ev, `"`+e+`":[{"matcher":"*","hooks":[{"type":"command","command":"`+cmd+`"}]}]`)
	}
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"hooks":{`+strings.Join(ev, ",")+`}}`)
	code, out, errOut := p.Brood("run", "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	post := map[string]map[string]any{}
	seen := map[string]bool{}
	for _, r := range clitest.JSONValues(t, readFile(t, log)) {
		name := r["hook_event_name"].(string)
		seen[name] = true
		if eff, ok := r["effort"].(map[string]any); !ok || eff["level"] == "" || eff["level"] == nil {
			t.Errorf("%s has no effort.level: %v", name, r)
		}
		if name == "PostToolUse" {
			post[r["tool_name"].(string)] = r["tool_response"].(map[string]any)
		}
	}
	for _, e := range []string{"PreToolUse", "PostToolUse", "Stop", "SubagentStop"} {
		if !seen[e] {
			t.Errorf("no %s payload", e)
		}
	}
	notes := filepath.Join(p.Root, "notes.txt")
	if real, err := filepath.EvalSymlinks(p.Root); err == nil {
		notes = filepath.Join(real, "notes.txt")
	}
	want := map[string]map[string]any{
		"Bash":  {"stdout": "out\nerr", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false},
		"Write": {"type": "create", "filePath": notes, "content": "one\ntwo\n"},
		"Edit":  {"filePath": notes, "oldString": "two", "newString": "three", "replaceAll": false, "userModified": false},
		"Read":  {"type": "text"},
		"Agent": {"isAsync": false, "status": "completed", "description": "scout it", "prompt": "look around"},
	}
	for tool, fields := range want {
		got, ok := post[tool]
		if !ok {
			t.Errorf("no PostToolUse for %s: %v", tool, post)
			continue
		}
		if _, ok := got["content"].(string); ok && tool != "Write" {
			t.Errorf("%s's tool_response is brood's {content}: %v", tool, got)
		}
		for k, v := range fields {
			if got[k] != v {
				t.Errorf("%s tool_response.%s = %#v, want %#v (all: %v)", tool, k, got[k], v, got)
			}
		}
	}
	if f, _ := post["Read"]["file"].(map[string]any); f == nil || f["content"] != "one\nthree" || f["numLines"] != 2.0 || f["startLine"] != 1.0 || f["totalLines"] != 2.0 {
		t.Errorf("Read's tool_response.file = %v", post["Read"]["file"])
	}
	if id, _ := post["Agent"]["agentId"].(string); id == "" || !strings.HasPrefix(id, taskOf(t, p, "scout")) {
		t.Errorf("Agent's agentId = %v, want the scout's task id", post["Agent"]["agentId"])
	}
	if _, err := os.Stat(notes); err != nil {
		t.Fatal(err)
	}
}
