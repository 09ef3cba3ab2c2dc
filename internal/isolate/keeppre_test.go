//go:build linux

package isolate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedLandingKeepsEarlierVersionsAway (review20 L5, L7): when a
// failed landing cannot put a file back, its earlier version is kept in
// the parent's own directory (KeepDir, 0700), not the task's state a
// delegating sibling can write; and when it cannot be kept the result
// says so, never "are in " and nothing.
func TestFailedLandingKeepsEarlierVersionsAway(t *testing.T) {
	cases := []struct {
		name     string
		keepFile bool // KeepDir is a file: nothing can be kept there
	}{
		{"kept in KeepDir", false},
		{"could not be kept", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top, state, keep := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "records")
			write(t, filepath.Join(top, "x/y.txt"), "user's\n")
			pre, err := savePreimages(top, []rawEntry{{path: "x/y.txt", status: 'M', newMode: "100644"}})
			if err != nil {
				t.Fatal(err)
			}
			// The landing wrote x/y.txt, then x became a file: it cannot be put back.
			if err := os.RemoveAll(filepath.Join(top, "x")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(top, "x"), "landed\n")
			if c.keepFile {
				write(t, keep, "not a directory\n")
			}
			w := &Workspace{state: state, keepDir: keep, id: "T1"}
			out := &Outcome{}
			why, wrote := w.rollBack(pre, out, "git apply", errors.New("boom"))
			if !wrote || len(out.Partial) == 0 {
				t.Fatalf("wrote=%v partial=%v: want a partly-applied landing", wrote, out.Partial)
			}
			if ents, _ := os.ReadDir(state); len(ents) > 0 {
				t.Errorf("earlier versions written in the task's state %s (%d entries)", state, len(ents))
			}
			if c.keepFile {
				if out.Preimages != "" || strings.Contains(why, "are in") || !strings.Contains(why, "could not be kept") {
					t.Errorf("preimages=%q why=%q: want \"could not be kept\"", out.Preimages, why)
				}
				return
			}
			if !strings.HasPrefix(out.Preimages, keep+string(filepath.Separator)+"T1.before-landing-") || !strings.Contains(why, out.Preimages) {
				t.Errorf("preimages=%q why=%q: want under %s", out.Preimages, why, keep)
			}
			if b, err := os.ReadFile(filepath.Join(out.Preimages, "x/y.txt")); err != nil || string(b) != "user's\n" {
				t.Errorf("earlier version %q, %v", b, err)
			}
			if fi, err := os.Stat(out.Preimages); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("kept directory %v, %v: want 0700", fi, err)
			}
		})
	}
}
