package trust

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNestedWalkSearchOnlyLinks: a directory the guard's walk can search
// but not list gets its read bit back and is listed with its links: a
// link out of the tree there is listed, not dropped (review24 P1-2); a
// links-only walk, which gives no read bit back, says it unseen. File
// modes bind only a user other than root: run as root, the test runs
// itself again as nobody.
func TestNestedWalkSearchOnlyLinks(t *testing.T) {
	if os.Getuid() == 0 {
		asNobody(t, "TestNestedWalkSearchOnlyLinks")
		return
	}
	top := t.TempDir()
	d := filepath.Join(top, "d")
	must(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
	must(t, os.Symlink("/etc/passwd", filepath.Join(d, "Makefile")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(d, "sub", "deeper")))
	must(t, os.Chmod(d, 0o311)) // searchable, not listable
	t.Cleanup(func() { _ = os.Chmod(d, 0o755) })
	if _, err := os.ReadDir(d); err == nil {
		t.Fatal("d could be listed: the test shows nothing")
	}
	got, err := NestedWalk(top, WalkOptions{Only: true})
	must(t, err)
	if len(got.Unseen) != 1 || got.Unseen[0].Dir != "d" {
		t.Errorf("links-only walk: Unseen = %v, want d", got.Unseen)
	}
	got, err = NestedWalk(top, WalkOptions{Links: true})
	must(t, err)
	want := map[string]string{"d/Makefile": "/etc/passwd", "d/sub/deeper": "/etc/passwd"}
	if !maps.Equal(got.Links, want) || len(got.Unseen) > 0 || len(got.Opened) != 1 || got.Opened[0] != "d" {
		t.Errorf("guard's walk: Links %v Unseen %v Opened %v, want Links %v, nothing unseen, d opened", got.Links, got.Unseen, got.Opened, want)
	}
}

// asNobody runs the test binary's test named test again as uid/gid 65534,
// from a copy of the binary nobody can run, and fails with its output if
// it fails.
func asNobody(t *testing.T, test string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "brood-nobody-")
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	b, err := os.ReadFile(os.Args[0])
	must(t, err)
	exe := filepath.Join(dir, "test")
	must(t, os.WriteFile(exe, b, 0o755))
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+os.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
}
