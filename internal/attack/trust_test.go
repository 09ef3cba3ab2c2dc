package attack_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// rawControl reports the first byte sequence in s that a terminal would
// act on: ESC, an 8-bit CSI/OSC, BEL, NUL or a lone carriage return.
func rawControl(s string) string {
	for _, bad := range []string{"\x1b", "\u009b", "\u009d", "\x07", "\x00", "\r"} {
		if i := strings.Index(s, bad); i >= 0 {
			return s[max(0, i-20):min(len(s), i+20)]
		}
	}
	return ""
}

// hostileTerminalScript has a child put control sequences everywhere a
// person or a model later reads: the task description, a Bash command, the
// command's output (with a NUL) and its summary.
const hostileTerminalScript = `agents:
  root:
    - tools:
        - Task:
            subagent_type: general-purpose
            description: "desc \x1b]0;PWNED-TITLE\x07 \x1b[2J"
            prompt: "do it"
    - say: "root done \x1b]52;c;cm0gLXJmIH4K\x07"
  general-purpose:
    - tools:
        - Bash:
            command: "printf 'out \\033]0;T\\007 nul \\000 end\\n' # \x1b[2J"
    - say: "summary \x1b]52;c;cm0gLXJmIH4K\x07 \u009b2J done \x00"
`

// TestTerminalSafety (case 9): OSC/CSI sequences in a description, a Bash
// command, tool output and a summary never reach a terminal through the
// progress lines, brood tasks, tasks output or tasks log; NUL never reaches
// the parent model raw.
func TestTerminalSafety(t *testing.T) {
	p := newProject(t, nil)
	mdl := p.script("hostile.yaml", hostileTerminalScript)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "root done") {
		t.Fatalf("run printed no answer:\n%s", out)
	}
	for name, s := range map[string]string{"run stdout": out, "run stderr": errs} {
		if c := rawControl(s); c != "" {
			t.Errorf("%s carries a raw control sequence near %q", name, c)
		}
	}
	ids := p.taskIDs()
	if len(ids) != 1 {
		t.Fatalf("want one task, got %v", ids)
	}
	id := ids[0]
	for _, args := range [][]string{{"tasks"}, {"tasks", "output", id}, {"tasks", "log", id}, {"tasks", "show", id}} {
		code, out, errs := p.brood(t.Context(), nil, args...)
		if code != 0 {
			t.Errorf("%v: code %d\n%s", args, code, errs)
		}
		if c := rawControl(out + errs); c != "" {
			t.Errorf("%v carries a raw control sequence near %q", args, c)
		}
	}
	// The parent model read the child's result with the NUL escaped.
	recs := p.rootTranscript()
	var seen bool
	for _, r := range recs {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			seen = true
			if strings.Contains(r.Output, "\x00") || !strings.Contains(r.Output, `\x00`) {
				t.Errorf("the Task result the model read holds a raw NUL or lost it: %q", r.Output)
			}
		}
	}
	if !seen {
		t.Errorf("no Task result in the root transcript")
	}
}

// taskIDs lists the project's dispatch directories.
func (p *project) taskIDs() []string {
	p.t.Helper()
	ents, err := os.ReadDir(filepath.Join(p.root, ".brood", "dispatch"))
	if err != nil {
		p.t.Fatalf("no dispatches: %v", err)
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// rootTranscript reads the newest root session transcript.
func (p *project) rootTranscript() []session.Record {
	p.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(p.root, ".brood", "sessions", "*.jsonl"))
	if len(paths) == 0 {
		p.t.Fatal("no root transcript")
	}
	recs, _, err := session.ReadFile(paths[len(paths)-1])
	if err != nil {
		p.t.Fatal(err)
	}
	return recs
}

// readJSON decodes a JSON file into a map.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}
