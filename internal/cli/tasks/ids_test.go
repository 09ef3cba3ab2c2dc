package tasks_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/shortid"
)

// TestOneIDRule: `brood tasks` shows each id as its shortest unique prefix,
// and every verb takes that prefix, any unique tail (as the TUI's tree
// shows) or the whole id; an id two tasks share names both (#28 item 7:
// main took no tail).
func TestOneIDRule(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	a := p.DispatchOK("scout", "what is in the README?")
	b := p.DispatchOK("stepper", "go")

	code, out, errOut := p.Brood("tasks")
	if code != 0 {
		t.Fatalf("tasks: code %d, stderr %q", code, errOut)
	}
	shown := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if strings.HasPrefix(line, "(") {
			continue
		}
		f := strings.Fields(line)
		for _, id := range []string{a, b} {
			if strings.HasPrefix(id, f[0]) {
				shown[id] = f[0]
			}
		}
	}
	for _, id := range []string{a, b} {
		s := shown[id]
		shared := 0
		for shared < len(a) && a[shared] == b[shared] {
			shared++
		}
		if len(s) < min(shared, shortid.TimePart)+shortid.Past || len(s) >= len(id) || strings.HasPrefix(a, s) == strings.HasPrefix(b, s) {
			t.Errorf("%s shown as %q: want a prefix of it alone, six characters or more past the timestamp part the ids share", id, s)
		}
	}

	for _, tc := range []struct{ q, want string }{
		{shown[a], a}, {shown[b], b}, {a[len(a)-6:], a},
		{shown[a][len(shown[a])-7:], a}, {strings.ToLower(shown[b][len(shown[b])-6:]), b}, // the tail of the shown id (P2-4) {strings.ToLower(b[len(b)-6:]), b}, {a, a}, {shown[a] + "…", a},
	} {
		for _, verb := range [][]string{{"tasks", "show", "--json", tc.q}, {"tasks", "output", tc.q}, {"tasks", "tree", tc.q}} {
			code, out, errOut := p.Brood(verb...)
			if code != 0 {
				t.Errorf("brood %v: code %d, stderr %q", verb, code, errOut)
				continue
			}
			if verb[1] == "show" && !strings.Contains(out, `"id": "`+tc.want+`"`) {
				t.Errorf("brood %v shows another task:\n%s", verb, out)
			}
		}
	}

	shared := a[:2]
	code, _, errOut = p.Brood("tasks", "show", shared)
	if code == 0 || !strings.Contains(errOut, "is ambiguous (2 tasks: ") || !strings.Contains(errOut, a) || !strings.Contains(errOut, b) {
		t.Errorf("ambiguous %q: code %d, stderr %q; want both candidates named", shared, code, errOut)
	}
	typo := shown[a][len(shown[a])-9:len(shown[a])-1] + "!"
	code, _, errOut = p.Brood("tasks", "show", typo)
	if code == 0 || !strings.Contains(errOut, "no task "+typo+" under ") || !strings.Contains(errOut, "did you mean "+a+"?") {
		t.Errorf("typo %q: code %d, stderr %q; want the close id named", typo, code, errOut)
	}
	code, _, errOut = p.Brood("tasks", "kill", "QQQQQQ")
	if code == 0 || !strings.HasPrefix(errOut, "brood: no task QQQQQQ under ") {
		t.Errorf("unknown: code %d, stderr %q", code, errOut)
	}
}
