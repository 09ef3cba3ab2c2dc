package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
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

func TestRunWithoutModel(t *testing.T) {
	p := clitest.NewProject(t)
	code, out, errOut := p.Brood("run", "hello")
	if code != 1 || out != "" {
		t.Fatalf("code %d, stdout %q", code, out)
	}
	if !strings.HasPrefix(errOut, "brood: no model configured") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q, want the one-line no-model error", errOut)
	}
	if _, err := os.Stat(filepath.Join(p.Root, ".brood", "sessions")); err == nil {
		t.Error("a failed start left a session behind")
	}
}

// TestPrintNoPromptBeforeModel: `brood -p </dev/null` with no model
// configured says there is no prompt (claude -p: "Input must be provided
// either through stdin or as a prompt argument"), not that there is no
// model: the prompt is checked first. Continuing a session needs none.
func TestPrintNoPromptBeforeModel(t *testing.T) {
	p := clitest.NewProject(t)
	for _, args := range [][]string{{"-p"}, {"run"}, {"-p", "--output-format", "json"}, {"-p", "  "}} {
		code, out, errOut := p.Brood(args...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, "brood: no prompt:") || strings.Contains(errOut, "model") {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want exit 1 and the no-prompt line", args, code, out, errOut)
		}
	}
	if code, _, errOut := p.Brood("-p", "--continue"); code != 1 || !strings.Contains(errOut, "no model configured") {
		t.Errorf("--continue without a prompt: code %d, stderr %q; want the model checked (a session may go on without a prompt)", code, errOut)
	}
}

func TestRunTextMode(t *testing.T) {
	p := clitest.NewProject(t)
	code, out, errOut := p.Brood("run", "--model", p.Script("s.yaml", lsScript), "what", "is", "here?")
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
	files := clitest.SessionFiles(t, p.Root)
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	recs, bad, err := session.ReadFile(files[0])
	if err != nil || bad != 0 {
		t.Fatal(err, bad)
	}
	st := session.Replay(recs)
	if st.Status != "done" || st.Turns != 2 || st.Messages[0].Text() != "what is here?" || st.Model != "script:"+filepath.Join(p.Root, ".brood", "s.yaml") {
		t.Errorf("transcript: %+v", st)
	}
}

func TestRunJSONMode(t *testing.T) {
	p := clitest.NewProject(t)
	code, out, errOut := p.Brood("run", "--mode", "json", "--model", p.Script("s.yaml", lsScript), "what is here?")
	if code != 0 {
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	lines := clitest.JSONLines(t, out)
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
	if res["session"] != clitest.SessionFiles(t, p.Root)[0] || lines[0]["session"] != res["session"] {
		t.Errorf("session path %v / %v", lines[0]["session"], res["session"])
	}
}

func TestRunMaxTurnsGivesPartial(t *testing.T) {
	p := clitest.NewProject(t)
	spec := p.Script("s.yaml", lsScript)
	code, out, errOut := p.Brood("run", "--brood-exit-codes", "--max-turns", "1", "--model", spec, "look")
	if code != 3 { // partial, with brood's own codes
		t.Fatalf("code %d, stderr:\n%s", code, errOut)
	}
	if out != "Error: Reached max turns (1)" {
		t.Errorf("stdout %q, want claude -p's line, not the interim text", out)
	}
	if !strings.Contains(errOut, "· Let me look.") || !strings.Contains(errOut, "partial after 1 turns") || !strings.Contains(errOut, "--resume ") {
		t.Errorf("stderr:\n%s", errOut)
	}
	// claude -p's habit without --brood-exit-codes: exit 1, the same stdout
	// (exit-codes.md of Claude Code 2.1.332: "--max-turns 1, no subagent
	// tool": 1, `Error: Reached max turns (1)`, no trailing newline).
	code, out, errOut = p.Brood("-p", "--max-turns", "1", "--model", spec, "look")
	if code != 1 || out != "Error: Reached max turns (1)" || strings.Contains(out, "Let me look.") {
		t.Errorf("-p at the turn cap: code %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	code, out, _ = p.Brood("run", "--mode", "json", "--max-turns", "1", "--model", spec, "look")
	lines := clitest.JSONLines(t, out)
	if res := lines[len(lines)-1]; code != 1 || res["status"] != "partial" || res["turns"] != 1.0 {
		t.Errorf("json result %v", res)
	}
	// The partial transcript continues: the capped call was answered, so
	// the next run is valid and reaches the script's second turn.
	files := clitest.SessionFiles(t, p.Root)
	code, out, errOut = p.Brood("run", "--session", files[0], "--model", spec, "go on")
	if code != 0 || !strings.HasPrefix(out, "There are ") {
		t.Errorf("continue: code %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

func TestRunModelErrorExits1(t *testing.T) {
	p := clitest.NewProject(t)
	spec := p.Script("s.yaml", "agents:\n  root:\n    - say: \"{{nosuch}}\"\n")
	code, _, errOut := p.Brood("run", "--model", spec, "x")
	if code != 1 || !strings.Contains(errOut, "nosuch") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
	code, _, errOut = p.Brood("run", "--model", p.Script("bad.yaml", "agents: {root: [{bogus: 1}]}\n"), "x")
	if code != 1 || !strings.Contains(errOut, "bad.yaml") {
		t.Errorf("bad script: code %d, stderr %q", code, errOut)
	}
}

func TestRunSessionNothingToContinue(t *testing.T) {
	p := clitest.NewProject(t)
	spec := p.Script("s.yaml", "agents:\n  root:\n    - say: hi\n")
	if code, _, errOut := p.Brood("run", "--model", spec, "x"); code != 0 {
		t.Fatal(errOut)
	}
	code, _, errOut := p.Brood("run", "--model", spec, "--session", clitest.SessionFiles(t, p.Root)[0])
	if code != 1 || !strings.Contains(errOut, "nothing to continue") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}
