package tool

import (
	"slices"
	"strings"
	"testing"
)

// TestTestRunnerRuleCoversTheWorkspacesTests: a rule for a test runner
// (`Bash(go test:*)`, `Bash(pytest:*)`) is one for this project's tests
// (it is kept in the project's own settings: the runner runs the
// repository's code, docs/permissions.md). It covers a test of the
// workspace, by any spelling, but not a test file or package outside it
// (`go test /tmp/x_test.go`, `pytest ../x.py`: code the rule's author
// never saw, which the evidence guardrail takes for no evidence either),
// nor go's -C, which runs go in another directory; such a call asks, and
// the advice offers no rule to keep.
func TestTestRunnerRuleCoversTheWorkspacesTests(t *testing.T) {
	const ws = "/w"
	p, err := NewPermissions("default", []string{"Bash(go test:*)", "Bash(pytest:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		allow   bool
		why     string // in the reason of an ask
	}{
		{"go test ./...", true, ""},
		{"go test ./internal/a x_test.go", true, ""},
		{"go test /w/sub/...", true, ""},
		{"go test example.com/x/...", true, ""},
		{"go test -run TestX -coverprofile /tmp/c.out ./...", true, ""},
		{"go test -count=1 ./... -args /tmp/data", true, ""},
		{"pytest tests/", true, ""},
		{"pytest -k 'a or b' tests/test_x.py::test_a", true, ""},
		{"pytest /w/tests", true, ""},
		{"go test /tmp/x_test.go", false, "/tmp/x_test.go, which is a test outside the workspace"},
		{"go test ../other/...", false, "../other/..., which is a test outside the workspace"},
		{"go test ~/x/...", false, "outside the workspace"},
		{"go test -v /tmp/pkg", false, "outside the workspace"},
		{"go test -C /elsewhere ./...", false, "-C, which runs go in another directory"},
		{"pytest /tmp/x.py", false, "/tmp/x.py, which is a test outside the workspace"},
		{"pytest -q ../x.py", false, "outside the workspace"},
		{"pytest /tmp/x.py::test_a", false, "outside the workspace"},
	} {
		d := p.Check("Bash", bashIn(tc.command), ws)
		if tc.allow {
			if d.Verdict != Allow {
				t.Errorf("%q: %v (%s), want it allowed", tc.command, d.Verdict, d.Reason)
			}
			continue
		}
		if d.Verdict != Ask || !strings.Contains(d.Reason, tc.why) || strings.Contains(d.Reason, "git") {
			t.Errorf("%q: %v (%s), want an ask saying %q", tc.command, d.Verdict, d.Reason, tc.why)
		}
		if slices.ContainsFunc(d.Suggest, func(s string) bool { return strings.HasSuffix(s, ":*)") }) {
			t.Errorf("%q: suggests %q, a prefix rule that would not cover it", tc.command, d.Suggest)
		}
	}
}
