package isolate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMountChildChangesNoMetadataOutside (review confine21a P1): a fleet
// worker's child mounts its copy itself (Mount.Configure); given what it
// writes, every other mount of its namespace is read-only, so chmod and
// utimes on a file of the worker's outside them fail (EROFS), while in
// its copy and what it writes they work, and /dev/null is still written.
// Before, the child's namespace was a writable copy of the worker's.
func TestMountChildChangesNoMetadataOutside(t *testing.T) {
	if !testIsolator(t).Support().Overlay {
		t.Skip("no overlay")
	}
	root := Resolved(t.TempDir())
	write(t, filepath.Join(root, "a.txt"), "a\n")
	task, outside := Resolved(t.TempDir()), Resolved(t.TempDir())
	victim := filepath.Join(outside, "victim")
	write(t, victim, "v\n")
	if err := os.Chmod(victim, 0o640); err != nil {
		t.Fatal(err)
	}
	job := t.TempDir() // (as a worker's job directory: codesnap)
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(job, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	m := &Mount{Root: root, Upper: filepath.Join(job, "upper"), Work: filepath.Join(job, "work"), Dir: root}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childScript+`=
echo mine > a.txt && chmod 0600 a.txt && touch -d 2001-01-01 a.txt
echo r > `+task+`/r && chmod 0600 `+task+`/r
echo x > /dev/null
if chmod 0666 `+victim+` 2>/dev/null; then echo CHMOD-OUTSIDE-OK; exit 10; fi
if touch -d 2001-01-01 `+victim+` 2>/dev/null; then echo TOUCH-OUTSIDE-OK; exit 11; fi
if chmod 0777 `+job+`/upper 2>/dev/null; then echo CHMOD-LAYERS-OK; exit 12; fi
echo FINE`)
	if err := m.Configure(cmd, []string{task}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	fi, err := os.Stat(victim)
	if err != nil || fi.Mode().Perm() != 0o640 || fi.ModTime().Year() == 2001 {
		t.Errorf("the worker's file outside the child's writes changed: %v %v", fi.Mode(), err)
	}
	if read(t, filepath.Join(root, "a.txt")) != "a\n" || read(t, filepath.Join(task, "r")) != "r\n" {
		t.Errorf("the child wrote its copy's lower layer, or not its task directory:\n%s", out.String())
	}
}
