package childrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestTreeBefore: an in-place writer takes the tree as its parent found it
// from tree-before.json and walks the tree itself only where there is none
// (or it does not parse).
func TestTreeBefore(t *testing.T) {
	handed := &dispatch.TreeState{Git: true, Files: map[string]string{"pre.txt": "??:abc"}}
	data, err := json.Marshal(handed)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		file   []byte // tree-before.json, nil for none
		want   string // a path the state must name
		handed bool
	}{
		{"handed down", data, "pre.txt", true},
		{"none: walks", nil, "walked.txt", false},
		{"corrupt: walks", []byte("{"), "walked.txt", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, work := t.TempDir(), t.TempDir() // work: no git repository, so the walk lists every file
			if err := os.WriteFile(filepath.Join(work, "walked.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.file != nil {
				if err := os.WriteFile(filepath.Join(dir, dispatch.TreeBeforeFile), c.file, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st := treeBefore(t.Context(), dir, work)
			if st == nil {
				t.Fatal("no state")
			}
			if _, ok := st.Files[c.want]; !ok {
				t.Errorf("state %v does not name %s", st.Files, c.want)
			}
			if _, walked := st.Files["walked.txt"]; walked == c.handed {
				t.Errorf("walked the tree: %v, want %v", walked, !c.handed)
			}
		})
	}
}
