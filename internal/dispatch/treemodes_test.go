package dispatch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestModeChanges (review confine21a P2): a writer that gives others
// write on its tree's directory or a file in it, or makes one set-user-ID,
// is reported (git status shows none of it), in a repository and outside
// one; a chmod +x is not.
func TestModeChanges(t *testing.T) {
	cases := []struct {
		name  string
		git   bool
		chmod map[string]os.FileMode
		want  []string
	}{
		{"git: root world-writable", true, map[string]os.FileMode{".": 0o777}, []string{". 0755→0777"}},
		{"git: untracked file group-writable", true, map[string]os.FileMode{"new.txt": 0o664}, []string{"new.txt 0644→0664"}},
		{"git: tracked file setuid", true, map[string]os.FileMode{"run.sh": os.ModeSetuid | 0o755}, []string{"run.sh now 4755"}},
		{"git: chmod +x", true, map[string]os.FileMode{"run.sh": 0o755, "new.txt": 0o755}, nil},
		{"no git: root and file", false, map[string]os.FileMode{".": 0o775, "run.sh": 0o646}, []string{". 0755→0775", "run.sh 0644→0646"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.Chmod(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.git {
				gitIn(t, root, "init", "-q", "-b", "main")
			}
			for _, f := range []string{"run.sh", "new.txt"} {
				if err := os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(filepath.Join(root, f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.git {
				gitIn(t, root, "add", "run.sh")
				gitIn(t, root, "commit", "-qm", "mine")
			}
			ctx := context.Background()
			before, err := dispatch.SnapshotTree(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			for p, m := range c.chmod {
				if err := os.Chmod(filepath.Join(root, p), m); err != nil {
					t.Fatal(err)
				}
			}
			after, err := dispatch.SnapshotTree(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			if got := dispatch.ModeChanges(before, after); !slices.Equal(got, c.want) {
				t.Errorf("ModeChanges = %q, want %q", got, c.want)
			}
		})
	}
}
