package childrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestParentWalks: an in-place writer leaves its account of what it
// changed to its parent only when the parent handed down the tree as it
// found it (tree-before.json: its walk succeeded, and it walks again after
// the child); with none, or one that does not parse, the child walks the
// tree itself before and after its work.
func TestParentWalks(t *testing.T) {
	handed, err := json.Marshal(&dispatch.TreeState{Git: true, Files: map[string]string{"pre.txt": "??:abc"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		file []byte // tree-before.json, nil for none
		want bool
	}{
		{"handed down", handed, true},
		{"handed down, clean tree", []byte(`{"Git":true,"Files":{}}`), true},
		{"none", nil, false},
		{"corrupt", []byte("{"), false},
		{"no files", []byte(`{"Git":true}`), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.file != nil {
				if err := os.WriteFile(filepath.Join(dir, dispatch.TreeBeforeFile), c.file, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := parentWalks(dir); got != c.want {
				t.Errorf("parentWalks = %v, want %v", got, c.want)
			}
		})
	}
}
