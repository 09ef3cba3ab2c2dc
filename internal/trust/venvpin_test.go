package trust

import (
	"os"
	"path/filepath"
	"testing"
)

// TestVenvPins (redteam20 P2-2): a sourced venv activate script is exempt
// only when the parent pinned it before the child ran (a venv's, with its
// pyvenv.cfg) and it is unchanged; one the child made or rewrote, or a
// bin/activate that is no venv's, undermines the line.
func TestVenvPins(t *testing.T) {
	const line = ". .venv/bin/activate && go test ./..."
	for _, tc := range []struct {
		name      string
		cfg       bool   // .venv/pyvenv.cfg present at the pin
		before    string // .venv/bin/activate at the pin ("" absent)
		after     string // and at the judgement
		undermine bool
		line      string          // "" the plain line
		change    func(ws string) // after the pin, besides activate
	}{
		{"pinned and unchanged", true, "VIRTUAL_ENV=/x\n", "VIRTUAL_ENV=/x\n", false, "", nil},
		{"rewritten by the child", true, "VIRTUAL_ENV=/x\n", "go() { echo ok; }\n", true, "", nil},
		{"made by the child", true, "", "go() { echo ok; }\n", true, "", nil},
		{"no pyvenv.cfg: no venv's", false, "go() { echo ok; }\n", "go() { echo ok; }\n", true, "", nil},
		// (evfix2, review #1) bin/ is first on PATH after activate
		{"links unchanged", true, "A\n", "A\n", false, "", func(string) {}},
		{"a go written into bin", true, "A\n", "A\n", true, "", func(ws string) { writeBin(t, filepath.Join(ws, ".venv/bin/go"), "#!/bin/sh\n") }},
		{"python link swapped", true, "A\n", "A\n", true, "", func(ws string) { relink(t, "fake", filepath.Join(ws, ".venv/bin/python")) }},
		{"the file a link leads to rewritten", true, "A\n", "A\n", true, "", func(ws string) { writeBin(t, filepath.Join(ws, ".venv/lib/pt"), "#!/bin/sh\nexit 0\n") }},
		{"pytest rewritten, same size", true, "A\n", "A\n", true, "", func(ws string) { writeBin(t, filepath.Join(ws, ".venv/bin/pytest"), "#!/bin/sh\nexit 0\n") }},
		// (evfix2, review #2) a cd makes the sourced path another
		{"cd before the source", true, "A\n", "A\n", true, "cd sub && . .venv/bin/activate && cd .. && go test ./...", func(string) {}},
		{"builtin cd before the source", true, "A\n", "A\n", true, "builtin cd sub; source .venv/bin/activate; go test ./...", func(string) {}},
		{"pushd in a loop", true, "A\n", "A\n", true, "for d in . sub; do source .venv/bin/activate; pushd sub; done; go test ./...", func(string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			act := filepath.Join(ws, ".venv", "bin", "activate")
			if err := os.MkdirAll(filepath.Dir(act), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.cfg {
				if err := os.WriteFile(filepath.Join(ws, ".venv", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.before != "" {
				if err := os.WriteFile(act, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.change != nil {
				writeBin(t, filepath.Join(ws, ".venv/bin/pytest"), "#!/bin/sh\nexit 1\n")
				writeBin(t, filepath.Join(ws, ".venv/lib/pt"), "#!/bin/sh\nexit 1\n")
				relink(t, "/usr/bin/python3", filepath.Join(ws, ".venv/bin/python"))
				relink(t, "../lib/pt", filepath.Join(ws, ".venv/bin/pt"))
			}
			pins := PinVenvs(ws)
			if err := os.WriteFile(act, []byte(tc.after), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(ws)
			}
			line := line
			if tc.line != "" {
				line = tc.line
			}
			why := UnderminedBy(line, func(p string) bool { return pins.Trusts(ws, p) })
			if (why != "") != tc.undermine {
				t.Fatalf("UnderminedBy = %q, want undermined %v", why, tc.undermine)
			}
			if why := Undermined(line); why == "" {
				t.Fatalf("Undermined (no pins) exempts the activate script")
			}
		})
	}
}

func writeBin(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

func relink(t *testing.T, target, path string) {
	t.Helper()
	_ = os.Remove(path)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}
