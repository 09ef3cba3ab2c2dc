package taskdir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRemember: the project's state directory goes first on the known
// projects' list, once; entries whose directory is gone are dropped, and
// the list keeps at most MaxKnown, the least recently used going first;
// the list is the user's alone (0600).
func TestRemember(t *testing.T) {
	for _, tc := range []struct {
		name     string
		have     int  // existing known projects before
		gone     bool // the second of them is removed before Remember
		wantLen  int
		wantLast int // index in have of the last entry kept
	}{
		{"first", 0, false, 1, -1},
		{"a few", 3, false, 4, 2},
		{"one gone", 3, true, 3, 2},
		{"full", MaxKnown, false, MaxKnown, MaxKnown - 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, _ := filepath.EvalSymlinks(t.TempDir())
			t.Setenv("XDG_STATE_HOME", state)
			base, _ := filepath.EvalSymlinks(t.TempDir())
			var have []string
			for i := range tc.have {
				d := filepath.Join(base, fmt.Sprint("p", i), StateDirName)
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				have = append(have, d)
			}
			if len(have) > 0 {
				if err := os.MkdirAll(filepath.Dir(KnownFile()), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := writeKnown(KnownFile(), have); err != nil {
					t.Fatal(err)
				}
			}
			if tc.gone {
				os.RemoveAll(have[1])
			}
			root := filepath.Join(base, "new")
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := Open(root).EnsureWritable(); err != nil {
				t.Fatal(err)
			}
			got := Known()
			if len(got) != tc.wantLen || got[0] != filepath.Join(root, StateDirName) {
				t.Fatalf("known %d entries, first %q; want %d, first the new project's", len(got), got[:min(len(got), 1)], tc.wantLen)
			}
			if tc.wantLast >= 0 && got[len(got)-1] != have[tc.wantLast] {
				t.Errorf("last known %s, want %s", got[len(got)-1], have[tc.wantLast])
			}
			if tc.gone && slices.Contains(got, have[1]) {
				t.Errorf("the gone project %s is still known", have[1])
			}
			if err := Open(root).EnsureWritable(); err != nil {
				t.Fatal(err)
			}
			if again := Known(); !slices.Equal(again, got) {
				t.Errorf("a second Remember changed the list: %d entries", len(again))
			}
			if fi, err := os.Stat(KnownFile()); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the list's mode: %v, %v", fi, err)
			}
		})
	}
}
