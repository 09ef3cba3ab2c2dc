package attack_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInheritedDescriptorNotHandedToChildren: a descriptor the root
// inherited without close-on-exec (a shell's `brood run … 9<secret`, an
// editor that leaks one) was handed to every child, and from it to the
// child's Bash: Landlock does not govern a descriptor already open, so
// the child read a file it is refused by path (forkprobe's finding). The
// root now marks what it inherited close-on-exec before it starts anything.
func TestInheritedDescriptorNotHandedToChildren(t *testing.T) {
	p := newProject(t, nil)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	writeFile(t, secret, "SECRET-BY-DESCRIPTOR\n")
	f, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mdl := p.script("fds.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: fds, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "{ cat <&9; } > leaked.txt 2>&1; echo tried > tried.txt"}
    - say: "child done"
`)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	cmd.Dir, cmd.Env = p.root, p.Env
	// fd 9 in the root: above the descriptors brood places in a child
	// itself (ExtraFiles from 3), so only inheritance can put it there.
	cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, nil, nil, f}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "root done") {
		t.Fatalf("run: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the child never tried (no tried.txt: %v)\n%s", err, errb.String())
	}
	leaked, err := os.ReadFile(filepath.Join(p.root, "leaked.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(leaked), "SECRET-BY-DESCRIPTOR") {
		t.Fatalf("the child's Bash read the root's inherited descriptor 9: %q", leaked)
	}
	if !strings.Contains(string(leaked), "Bad file descriptor") {
		t.Errorf("the child's `cat <&9` failed for another reason than a closed descriptor: %q", leaked)
	}
}
