package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

const lsScript = `
agents:
  root:
    - say: "Let me look."
      tools:
        - LS: {path: "."}
    - say: "There are {{count (result 0)}} entries here."
`

func TestVersion(t *testing.T) {
	p := newProject(t)
	code, out, errOut := p.brood("version")
	if code != 0 || out != "brood dev\n" || errOut != "" {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestRunWithoutModel(t *testing.T) {
	p := newProject(t)
	code, out, errOut := p.brood("run", "hello")
	if code != 1 || out != "" {
		t.Fatalf("code %d, stdout %q", code, out)
	}
	if !strings.HasPrefix(errOut, "brood: no model configured") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q, want the one-line no-model error", errOut)
	}
	if _, err := os.Stat(filepath.Join(p.root, ".brood", "sessions")); err == nil {
		t.Error("a failed start left a session behind")
	}
}

func sessionFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, ".brood", "sessions", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestRunTextMode(t *testing.T) {
	p := newProject(t)
	code, out, errOut := p.brood("run", "--model", p.script("s.yaml", lsScript), "what", "is", "here?")
	if code != 0 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	// README.md, main.go, docs/, .brood/ (LS shows what is there).
	if !strings.HasPrefix(out, "There are ") || strings.Count(out, "\n") != 1 {
		t.Errorf("stdout %q, want only the answer", out)
	}
	for _, w := range []string{"· session ", "· Let me look.", "▸ LS .", "· done after 2 turns"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	files := sessionFiles(t, p.root)
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	recs, bad, err := session.ReadFile(files[0])
	if err != nil || bad != 0 {
		t.Fatal(err, bad)
	}
	st := session.Replay(recs)
	if st.Status != "done" || st.Turns != 2 || st.Messages[0].Text() != "what is here?" || st.Model != "script:"+filepath.Join(p.root, ".brood", "s.yaml") {
		t.Errorf("transcript: %+v", st)
	}
}

func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestRunJSONMode(t *testing.T) {
	p := newProject(t)
	code, out, errOut := p.brood("run", "--mode", "json", "--model", p.script("s.yaml", lsScript), "what is here?")
	if code != 0 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	lines := jsonLines(t, out)
	var types []string
	for _, l := range lines {
		types = append(types, l["type"].(string))
	}
	joined := strings.Join(types, " ")
	for _, w := range []string{"start turn", "tool_call tool_result", "usage", "result"} {
		if !strings.Contains(joined, w) {
			t.Errorf("event types %q lack %q", joined, w)
		}
	}
	if types[0] != "start" {
		t.Errorf("first line %v", lines[0])
	}
	res := lines[len(lines)-1]
	if res["type"] != "result" || res["status"] != "done" || !strings.HasPrefix(res["text"].(string), "There are ") || res["turns"] != 2.0 {
		t.Errorf("result line %v", res)
	}
	if u, _ := res["usage"].(map[string]any); u == nil || u["input"].(float64) <= 0 {
		t.Errorf("result usage %v", res["usage"])
	}
	if res["session"] != sessionFiles(t, p.root)[0] || lines[0]["session"] != res["session"] {
		t.Errorf("session path %v / %v", lines[0]["session"], res["session"])
	}
}

func TestRunMaxTurnsGivesPartial(t *testing.T) {
	p := newProject(t)
	spec := p.script("s.yaml", lsScript)
	code, out, errOut := p.brood("run", "--max-turns", "1", "--model", spec, "look")
	if code != 0 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	if strings.TrimSpace(out) != "Let me look." {
		t.Errorf("stdout %q, want the latest text", out)
	}
	if !strings.Contains(errOut, "partial after 1 turns") || !strings.Contains(errOut, "--session ") {
		t.Errorf("stderr:\n%s", errOut)
	}
	code, out, _ = p.brood("run", "--mode", "json", "--max-turns", "1", "--model", spec, "look")
	lines := jsonLines(t, out)
	if res := lines[len(lines)-1]; code != 0 || res["status"] != "partial" || res["turns"] != 1.0 {
		t.Errorf("json result %v", res)
	}
	// The partial transcript continues: the capped call was answered, so
	// the next run is valid and reaches the script's second turn.
	files := sessionFiles(t, p.root)
	code, out, errOut = p.brood("run", "--session", files[0], "--model", spec, "go on")
	if code != 0 || !strings.HasPrefix(out, "There are ") {
		t.Errorf("continue: code %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

func TestRunModelErrorExits1(t *testing.T) {
	p := newProject(t)
	spec := p.script("s.yaml", "agents:\n  root:\n    - say: \"{{nosuch}}\"\n")
	code, _, errOut := p.brood("run", "--model", spec, "x")
	if code != 1 || !strings.Contains(errOut, "nosuch") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
	code, _, errOut = p.brood("run", "--model", p.script("bad.yaml", "agents: {root: [{bogus: 1}]}\n"), "x")
	if code != 1 || !strings.Contains(errOut, "bad.yaml") {
		t.Errorf("bad script: code %d, stderr %q", code, errOut)
	}
}

func TestRunSessionNothingToContinue(t *testing.T) {
	p := newProject(t)
	spec := p.script("s.yaml", "agents:\n  root:\n    - say: hi\n")
	if code, _, errOut := p.brood("run", "--model", spec, "x"); code != 0 {
		t.Fatal(errOut)
	}
	code, _, errOut := p.brood("run", "--model", spec, "--session", sessionFiles(t, p.root)[0])
	if code != 1 || !strings.Contains(errOut, "nothing to continue") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

// replayValid reads a transcript and checks it replays to a valid request.
func replayValid(t *testing.T, path string) session.State {
	t.Helper()
	recs, bad, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st := session.Replay(recs)
	st.Skipped = bad
	for i, m := range st.Messages {
		if i > 0 && st.Messages[i-1].Role == m.Role {
			t.Errorf("messages %d and %d are both %s", i-1, i, m.Role)
		}
		for _, u := range m.ToolUses() {
			found := false
			if i+1 < len(st.Messages) {
				for _, p := range st.Messages[i+1].Content {
					found = found || p.Type == model.PartToolResult && p.ToolUseID == u.ID
				}
			}
			if !found {
				t.Errorf("tool_use %s (%s) has no result", u.ID, u.Name)
			}
		}
	}
	return st
}
