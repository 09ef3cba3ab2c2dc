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
// file it only touches is not.
func TestTreeStateSeesACleanFormWritten(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	rot := "tr A-Za-z N-ZA-Mn-za-m"
	mustDo(t, os.WriteFile(global, []byte("[filter \"rot\"]\n\tclean = "+rot+"\n\tsmudge = "+rot+"\n\trequired = true\n"), 0o644))
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	root := t.TempDir()
	for name, body := range map[string]string{".gitattributes": "*.rot filter=rot\n", "s.rot": "Secret one\n", "b.txt": "plain\n"} {
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
	clean := git("cat-file", "-p", "HEAD:s.rot")
	if clean != "Frperg bar\n" {
		t.Fatalf("the filter pair does not run: blob %q", clean)
	}
	before, err := SnapshotTree(t.Context(), root)
	mustDo(t, err)
	later := time.Now().Add(time.Minute) // (a stat git sees changed)
	mustDo(t, os.WriteFile(filepath.Join(root, "s.rot"), []byte(clean), 0o644))
	mustDo(t, os.Chtimes(filepath.Join(root, "s.rot"), later, later))
	mustDo(t, os.Chtimes(filepath.Join(root, "b.txt"), later, later))
	after, err := SnapshotTree(t.Context(), root)
	mustDo(t, err)
	if got := Changed(before, after); !slices.Equal(got, []string{"s.rot"}) {
		t.Errorf("changed %v, want [s.rot] (its clean form written; b.txt only touched)", got)
	}
}
