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
	}{
		{"pinned and unchanged", true, "VIRTUAL_ENV=/x\n", "VIRTUAL_ENV=/x\n", false},
		{"rewritten by the child", true, "VIRTUAL_ENV=/x\n", "go() { echo ok; }\n", true},
		{"made by the child", true, "", "go() { echo ok; }\n", true},
		{"no pyvenv.cfg: no venv's", false, "go() { echo ok; }\n", "go() { echo ok; }\n", true},
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
			pins := PinVenvs(ws)
			if err := os.WriteFile(act, []byte(tc.after), 0o644); err != nil {
				t.Fatal(err)
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
