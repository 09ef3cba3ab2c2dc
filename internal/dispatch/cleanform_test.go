package dispatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestTreeStateSeesACleanFormWritten (review30 P3-3): an in-place writer
// that writes a filtered file's clean form (the blob the index holds, so
// the unfiltered status takes it for unchanged) is seen changing it; a
// file it only touches is not. Also when it unsets the filter first in a
// .gitattributes of its own that a .gitignore of its own ignores (review32
// P3-1): the tree's attributes then say no filter, the index's still do
// (and the ignored files it wrote are named as well).
func TestTreeStateSeesACleanFormWritten(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	rot := "tr A-Za-z N-ZA-Mn-za-m"
	mustDo(t, os.WriteFile(global, []byte("[filter \"rot\"]\n\tclean = "+rot+"\n\tsmudge = "+rot+"\n\trequired = true\n"), 0o644))
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, tc := range []struct {
		name  string
		extra map[string]string // what the writer writes beside d/s.rot's clean form
	}{
		{"clean form", nil},
		{"under ignored attributes", map[string]string{"d/.gitignore": ".gitignore\n.gitattributes\n", "d/.gitattributes": "s.rot -filter\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			mustDo(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
			for name, body := range map[string]string{".gitattributes": "*.rot filter=rot\n", "d/s.rot": "Secret one\n", "b.txt": "plain\n"} {
				mustDo(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
				old := time.Now().Add(-time.Hour) // (no racily clean entry: status re-hashes none)
				mustDo(t, os.Chtimes(filepath.Join(root, name), old, old))
			}
			git := func(args ...string) string {
				cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
				return string(out)
			}
			git("init", "-q")
			git("add", "-A")
			git("commit", "-qm", "init")
			clean := git("cat-file", "-p", "HEAD:d/s.rot")
			if clean != "Frperg bar\n" {
				t.Fatalf("the filter pair does not run: blob %q", clean)
			}
			before, err := SnapshotTree(t.Context(), root)
			mustDo(t, err)
			for name, body := range tc.extra {
				mustDo(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
			}
			later := time.Now().Add(time.Minute) // (a stat git sees changed)
			mustDo(t, os.WriteFile(filepath.Join(root, "d/s.rot"), []byte(clean), 0o644))
			mustDo(t, os.Chtimes(filepath.Join(root, "d/s.rot"), later, later))
			mustDo(t, os.Chtimes(filepath.Join(root, "b.txt"), later, later))
			after, err := SnapshotTree(t.Context(), root)
			mustDo(t, err)
			// The ignored files it wrote are its change too (report21).
			want := []string{"d/s.rot"}
			for name := range tc.extra {
				want = append(want, name)
			}
			slices.Sort(want)
			if got := Changed(before, after); !slices.Equal(got, want) {
				t.Errorf("changed %v, want %v (its clean form written and what it wrote beside it; b.txt only touched)", got, want)
			}
		})
	}
}
