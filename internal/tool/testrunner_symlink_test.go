package tool

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTestRunnerRuleSeesThroughSymlinks: a symlink in the workspace to a
// directory outside it does not make Bash(go test:*) or Bash(pytest:*)
// cover the tests out there (review P3-3); a link that stays inside, and
// a real directory, still do.
func TestTestRunnerRuleSeesThroughSymlinks(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(ws, "pkg"), filepath.Join(out, "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"link": out, "inlink": filepath.Join(ws, "pkg")} {
		if err := os.Symlink(to, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewPermissions("default", []string{"Bash(go test:*)", "Bash(pytest:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		allow   bool
	}{
		{"go test ./pkg/...", true},
		{"go test ./inlink/...", true},
		{"pytest pkg/", true},
		{"go test ./link", false},
		{"go test ./link/...", false},
		{"go test ./link/x/...", false},
		{"go test link/x_test.go", false},
		{"go test " + ws + "/link/...", false},
		{"pytest ./link/x.py", false},
		{"pytest link/new/test_y.py::test_a", false},
	} {
		d := p.Check("Bash", bashIn(tc.command), ws)
		if got := d.Verdict == Allow; got != tc.allow {
			t.Errorf("%q: %v (%s), want allowed %v", tc.command, d.Verdict, d.Reason, tc.allow)
		}
	}
}
