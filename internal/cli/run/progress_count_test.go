package run_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

var fanOutScript = `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: one, prompt: "look"}
        - Task: {subagent_type: explore, description: two, prompt: "look"}
        - Task: {subagent_type: explore, description: three, prompt: "look"}
    - say: "all looked"
  explore:
    - tools: [{Read: {file_path: README.md}}]
    - say: "looked"
`

// TestProgressCountsDone (#28 item 9): a headless run says after each
// subagent how many of the run's subagents are done ("2/3 done"), in text
// mode always and with --output-format json on stderr when asked
// (--verbose; a terminal on stderr does the same), its stdout still one
// JSON document. Main printed no count, and nothing at all for json.
func TestProgressCountsDone(t *testing.T) {
	p := clitest.NewDispatchProject(t, false)
	spec := p.Script("fan.yaml", fanOutScript)
	count := regexp.MustCompile(`(?m)^  \[explore \S+\] done in \S+ · tokens in \d+ out \d+ · (\d+)/(\d+) done$`)
	check := func(name, errs string) {
		t.Helper()
		m := count.FindAllStringSubmatch(errs, -1)
		if len(m) != 3 {
			t.Fatalf("%s: want three n/m done lines, got %d:\n%s", name, len(m), errs)
		}
		for i, x := range m {
			if want := string(rune('1' + i)); x[1] != want {
				t.Errorf("%s: line %d reads %s/%s done, want %s done", name, i+1, x[1], x[2], want)
			}
		}
		if last := m[2]; last[2] != "3" {
			t.Errorf("%s: the last line reads %s/%s done, want 3/3", name, last[1], last[2])
		}
	}

	code, out, errs := p.Brood("-p", "--model", spec, "go")
	if code != 0 || !strings.Contains(out, "all looked") {
		t.Fatalf("text: code %d\n%s\n%s", code, out, errs)
	}
	check("text", errs)

	code, out, errs = p.Brood("-p", "--output-format", "json", "--verbose", "--model", spec, "go")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("json --verbose: code %d\nstdout %s\nstderr %s", code, out, errs)
	}
	check("json --verbose", errs)

	code, out, errs = p.Brood("-p", "--output-format", "json", "--model", spec, "go")
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || count.MatchString(errs) {
		t.Errorf("json, stderr not a terminal: code %d, want no progress on stderr:\n%s", code, errs)
	}
}
