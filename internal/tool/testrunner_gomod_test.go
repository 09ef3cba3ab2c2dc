package tool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestTestRunnerRuleRefusesGoModOutside: `Bash(go test:*)` covers the
// workspace's tests, and a go test compiles and runs every directory its
// go.mod replaces a module with and every one its go.work uses: one
// outside the workspace (../other, /tmp/evil, a link inside that leads
// out) is code the rule's author never saw, so the rule does not cover
// the run; it asks, naming the file and line. A replace by a module
// version, or by a directory inside the workspace, is covered; a go.mod
// that is a FIFO does not hold the check.
func TestTestRunnerRuleRefusesGoModOutside(t *testing.T) {
	p, err := NewPermissions("default", []string{"Bash(go test:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, tc := range []struct {
		name  string
		files map[string]string
		link  string // ws/link -> outside, when set
		allow bool
		why   string
	}{
		{"no replace", map[string]string{"go.mod": "module example.com/w\n\ngo 1.26\n"}, "", true, ""},
		{"replace by a version", map[string]string{"go.mod": "module example.com/w\n\nreplace example.com/x => example.com/y v1.2.3\n"}, "", true, ""},
		{"replace inside", map[string]string{"go.mod": "module example.com/w\n\nreplace example.com/x => ./third_party/x\n"}, "", true, ""},
		{"replace outside", map[string]string{"go.mod": "module example.com/w\n\ngo 1.26\n\nreplace example.com/x => ../x // ours\n"}, "", false, "go.mod:5 (replace ../x), which points outside the workspace"},
		{"replace block, absolute", map[string]string{"go.mod": "module example.com/w\n\nreplace (\n\texample.com/a => ./a\n\texample.com/x v1.0.0 => \"" + outside + "\"\n)\n"}, "", false, "go.mod:5 (replace " + outside + ")"},
		{"replace through a link", map[string]string{"go.mod": "module example.com/w\n\nreplace example.com/x => ./link\n"}, "link", false, "go.mod:3 (replace ./link)"},
		{"go.work use outside", map[string]string{"go.mod": "module example.com/w\n", "go.work": "go 1.26\n\nuse (\n\t.\n\t../other\n)\n"}, "", false, "go.work:5 (use ../other)"},
		{"go.work use inside", map[string]string{"go.mod": "module example.com/w\n", "go.work": "go 1.26\n\nuse ./sub\n"}, "", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.link != "" {
				if err := os.Symlink(outside, filepath.Join(ws, tc.link)); err != nil {
					t.Fatal(err)
				}
			}
			d := p.Check("Bash", bashIn("go test ./..."), ws)
			if tc.allow {
				if d.Verdict != Allow {
					t.Errorf("%v (%s), want it allowed", d.Verdict, d.Reason)
				}
				return
			}
			if d.Verdict != Ask || !strings.Contains(d.Reason, tc.why) {
				t.Errorf("%v (%s), want an ask saying %q", d.Verdict, d.Reason, tc.why)
			}
			if slices.ContainsFunc(d.Suggest, func(s string) bool { return strings.HasSuffix(s, ":*)") }) {
				t.Errorf("suggests %q, a prefix rule that would not cover it", d.Suggest)
			}
			if d := p.Check("Bash", bashIn("go vet ./..."), ws); strings.Contains(d.Reason, "go.mod:") || strings.Contains(d.Reason, "go.work:") {
				t.Errorf("go vet, which runs no test, is judged by go.mod: %s", d.Reason)
			}
		})
	}
	t.Run("a FIFO", func(t *testing.T) {
		ws := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(ws, "go.mod"), 0o644); err != nil {
			t.Fatal(err)
		}
		if d := p.Check("Bash", bashIn("go test ./..."), ws); d.Verdict != Allow {
			t.Errorf("%v (%s)", d.Verdict, d.Reason)
		}
	})
}
