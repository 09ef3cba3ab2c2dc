package run_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/shortid"
)

// tenTurnScript: the root starts two explore siblings together; each calls
// one tool per turn, ten turns.
var tenTurnScript = `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: one, prompt: "look"}
        - Task: {subagent_type: explore, description: two, prompt: "look"}
    - say: "both looked"
  explore:
` + strings.Repeat("    - tools: [{Read: {file_path: README.md}}]\n", 10) + `    - say: "looked ten times"
`

// TestProgressBatchesAcrossTurns (issue 25 items 13 and 16): a child doing
// one tool per turn prints one progress line per five calls (flushed
// within a second: a loaded machine may split a batch, never make it a line
// per call), never its reasoning; siblings started together are shown by
// ids that do not look alike: their unique prefixes, at least six
// characters past the timestamp.
func TestProgressBatchesAcrossTurns(t *testing.T) {
	p := clitest.NewDispatchProject(t, false)
	code, out, errs := p.Brood("run", "--model", p.Script("ten.yaml", tenTurnScript), "go")
	if code != 0 || !strings.Contains(out, "both looked") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	line := regexp.MustCompile(`(?m)^  \[explore (\S+)\] ((?:Read(?:, )?)+)$`)
	calls, lines := map[string]int{}, map[string]int{}
	for _, m := range line.FindAllStringSubmatch(errs, -1) {
		lines[m[1]]++
		calls[m[1]] += strings.Count(m[2], "Read")
	}
	if len(calls) != 2 {
		t.Fatalf("want progress for two tasks, got %v:\n%s", calls, errs)
	}
	var shown []string
	for id, n := range calls {
		shown = append(shown, id)
		if n != 10 || lines[id] > 4 {
			t.Errorf("task %s: %d progress lines for %d calls, want the ten calls in batches of five:\n%s", id, lines[id], n, errs)
		}
	}
	if strings.HasPrefix(shown[0], shown[1]) || strings.HasPrefix(shown[1], shown[0]) {
		t.Errorf("siblings look alike: %q and %q", shown[0], shown[1])
	}
	ids := clitest.TaskIDs(t, p.Root)
	if len(ids) != 2 {
		t.Fatalf("tasks %v", ids)
	}
	shared := 0
	for shared < len(ids[0]) && ids[0][shared] == ids[1][shared] {
		shared++
	}
	for _, s := range shown {
		if _, err := shortid.Match(s, ids); err != nil {
			t.Errorf("the shown id %q does not name one task: %v", s, err)
		}
		if len(s) < min(shared, shortid.TimePart)+shortid.Past || strings.Contains(s, "…") {
			t.Errorf("task shown as %q: want at least %d characters past the %d its sibling shares (%v)", s, shortid.Past, min(shared, shortid.TimePart), ids)
		}
	}
}
