//go:build unix

package isolate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRemoveLinksInSearchOnlyDir: a link out of the tree in a directory
// of the user's that a writer made search-only (chmod 111; the guard's
// walk gives the read bit back, not the write bit) is removed all the
// same, and the directory keeps its mode. File modes bind only a user
// other than root: run as root, the test runs itself again as nobody.
func TestRemoveLinksInSearchOnlyDir(t *testing.T) {
	if os.Getuid() == 0 {
		asNobody(t, "TestRemoveLinksInSearchOnlyDir")
		return
	}
	top := t.TempDir()
	d := filepath.Join(top, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(d, "Makefile")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o511); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(d, 0o755) })
	removed, failed := RemoveLinks(top, []Link{{Path: "d/Makefile", Target: "/etc/passwd"}})
	if len(removed) != 1 || len(failed) != 0 {
		t.Errorf("RemoveLinks: removed %v, failed %v", removed, failed)
	}
	if _, err := os.Lstat(filepath.Join(d, "Makefile")); err == nil {
		t.Error("the link is still there")
	}
	if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o511 {
		t.Errorf("d's mode after: %v (%v), want 0511", fi.Mode(), err)
	}
}

// asNobody runs the test binary's test named test again as uid/gid 65534,
// from a copy of the binary nobody can run, and fails with its output if
// it fails.
func asNobody(t *testing.T, test string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "brood-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	b, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	exe := filepath.Join(dir, "test")
	if err == nil {
		err = os.WriteFile(exe, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+os.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
}
