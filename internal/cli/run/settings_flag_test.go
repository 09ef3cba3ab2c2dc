package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestSettingsFlag: --settings (a JSON string or a file) layers a Claude
// Code settings file over the others: a bare deny takes the tool off the
// model's list, defaultMode plan keeps Write from writing (acceptEdits lets it), model picks
// the model when --model is not given; what brood does not take from it
// is named on stderr, and bad JSON exits 1 naming the line.
func TestSettingsFlag(t *testing.T) {
	p := clitest.NewProject(t)
	echo := p.Script("s.yaml", echoScript)
	write := p.Script("w.yaml", writeScript)
	clitest.WriteFile(t, filepath.Join(p.Root, "model.json"), `{"model": "`+echo+`", "env": {"A": "1"}}`)
	tests := []struct {
		name string
		args []string
		want []string
		gone string
	}{
		{"deny string", []string{"--model", echo, "--settings", `{"permissions":{"deny":["Bash"]}}`}, []string{"PROMPT=Say hello"}, "Bash"},
		{"model from a file", []string{"--settings", "model.json"}, []string{"PROMPT=Say hello"}, ""},
		{"plan mode", []string{"--model", write, "--settings", `{"permissions":{"defaultMode":"plan"}}`}, []string{"RESULT="}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := p.Brood(append(append([]string{"-p"}, tc.args...), "Say hello")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q: %s", w, out)
				}
			}
			if tc.gone != "" {
				toolGone(tc.gone)(t, out, errOut)
			}
			if strings.Contains(errOut, "accepted;") {
				t.Errorf("a note for a flag that works: %s", errOut)
			}
		})
	}
	if fileExists(filepath.Join(p.Root, "out.txt")) {
		t.Error("defaultMode plan from --settings: Write wrote out.txt")
	}
	// defaultMode is applied: acceptEdits lets the same Write write.
	if code, _, errOut := p.Brood("-p", "--model", write, "--settings", `{"permissions":{"defaultMode":"acceptEdits"}}`, "Say hello"); code != 0 || !fileExists(filepath.Join(p.Root, "out.txt")) {
		t.Errorf("defaultMode acceptEdits from --settings: exit %d, out.txt not written; stderr %s", code, errOut)
	}
	// env is applied to the processes brood starts (the root's Bash and
	// hooks, subagents), never to brood's own environment; what would
	// steer brood is held back with a warning; hooks are named as not
	// taken.
	bash := p.Script("b.yaml", "agents:\n  root:\n    - tools:\n        - Bash: {command: 'echo \"G=$FLAG_GREETING\"'}\n    - say: \"RESULT={{result 0}}\"\n")
	code, out, errOut := p.Brood("-p", "--model", bash, "--permission-mode", "bypassPermissions", "--settings",
		`{"env":{"FLAG_GREETING":"from-flag","LD_PRELOAD":"/evil.so"},"hooks":{"Stop":[]}}`, "Say hello")
	if code != 0 || !strings.Contains(out, "RESULT=G=from-flag") {
		t.Errorf("env from --settings did not reach the root's Bash: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "env LD_PRELOAD is not applied") || !strings.Contains(errOut, "hooks not applied") {
		t.Errorf("stderr does not name what --settings did not apply: %s", errOut)
	}
	if v, ok := os.LookupEnv("FLAG_GREETING"); ok {
		t.Errorf("--settings env was set in brood's own process: FLAG_GREETING=%q", v)
	}
	code, _, errOut = p.Brood("-p", "--model", echo, "--settings", "{\n\"permissions\": {\"deny\": 3}}", "x")
	if code != 1 || !strings.Contains(errOut, "brood: --settings: line 2: permissions.deny is not a []string") {
		t.Errorf("bad --settings: exit %d, stderr %q", code, errOut)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
