package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestRunnerRuleReadsGoModAsGoDoes: the review's spellings, each of
// which real go follows to ../evil, make `Bash(go test:*)` ask: `replace(`
// with no blank, a quoted target holding "//", a go.work using a module
// whose own go.mod replaces outside, and a cd into a module whose go.mod
// does (or a cd brood cannot follow).
func TestTestRunnerRuleReadsGoModAsGoDoes(t *testing.T) {
	p, err := NewPermissions("default", []string{"Bash(go test:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const mod = "module example.com/w\n\ngo 1.24\n\nrequire example.com/x v0.0.0\n\n"
	const sub = "module example.com/sub\n\ngo 1.24\n\nrequire example.com/x v0.0.0\n\nreplace example.com/x => ../../evil\n"
	for _, tc := range []struct {
		name, cmd string
		files     map[string]string
		why       string
	}{
		{"replace(", "go test ./...", map[string]string{"go.mod": mod + "replace(\n\texample.com/x => ../evil\n)\n"}, "go.mod:8 (replace ../evil)"},
		{"quoted //", "go test ./...", map[string]string{"go.mod": mod + "replace example.com/x => \"../evil//\"\n"}, "go.mod:7 (replace ../evil//)"},
		{"go.work uses a module replacing outside", "go test ./sub/...", map[string]string{"go.mod": "module example.com/w\n\ngo 1.24\n", "go.work": "go 1.24\n\nuse (\n\t.\n\t./sub\n)\n", "sub/go.mod": sub}, "sub/go.mod:7 (replace ../../evil)"},
		{"cd into a module replacing outside", "cd sub && go test ./...", map[string]string{"go.mod": "module example.com/w\n", "sub/go.mod": sub}, "sub/go.mod:7 (replace ../../evil)"},
		{"cd into a package of such a module", "cd sub/pkg && go test .", map[string]string{"go.mod": "module example.com/w\n", "sub/go.mod": sub, "sub/pkg/p.go": "package p\n"}, "sub/go.mod:7 (replace ../../evil)"},
		{"a cd brood cannot follow", "cd \"$D\" && go test ./...", map[string]string{"go.mod": "module example.com/w\n"}, "cd"},
		{"go.mod that go cannot parse", "go test ./...", map[string]string{"go.mod": "module example.com/w\nreplace example.com/x => \"../evil\n"}, "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			ws := filepath.Join(root, "ws")
			for name, body := range tc.files {
				path := filepath.Join(ws, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d := p.Check("Bash", bashIn(tc.cmd), ws)
			if d.Verdict != Ask || !strings.Contains(d.Reason, tc.why) {
				t.Errorf("%s: %v (%s), want an ask saying %q", tc.cmd, d.Verdict, d.Reason, tc.why)
			}
		})
	}
	t.Run("cd into a module replacing inside", func(t *testing.T) {
		ws := t.TempDir()
		if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "sub", "go.mod"), []byte("module example.com/sub\nreplace example.com/x => ../x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if d := p.Check("Bash", bashIn("cd sub && go test ./..."), ws); d.Verdict != Allow {
			t.Errorf("%v (%s), want it allowed", d.Verdict, d.Reason)
		}
	})
}
