package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGuardNestedLinkSwap: an in-place child swaps a nested repository for a
// link to another; the guard's put-back writes nothing through the link.
func TestGuardNestedLinkSwap(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n", "sub/x.txt": "x\n"})
	if out, err := exec.Command("git", "-C", filepath.Join(p.root, "sub"), "init", "-q").CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	other := filepath.Join(t.TempDir(), "other")
	if out, err := exec.Command("git", "init", "-q", other).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	writeFile(t, filepath.Join(other, ".git", "config"), "[remote \"origin\"]\n\turl = USER-OTHER-REPO\n")
	writeFile(t, filepath.Join(other, ".git", "hooks", "pre-push"), "#!/bin/sh\n# user's hook\n")
	errs := p.childBash("swap", "mv sub sub.x && ln -s "+other+" sub; echo tried > tried.txt")
	t.Logf("run stderr: %s", errs)
	b, err := os.ReadFile(filepath.Join(other, ".git", "config"))
	t.Logf("other config: %q %v", b, err)
	if _, err := os.Stat(filepath.Join(other, ".git", "hooks", "pre-push")); err != nil {
		t.Errorf("user's other repo hook gone: %v", err)
	}
	if string(b) != "[remote \"origin\"]\n\turl = USER-OTHER-REPO\n" {
		t.Errorf("user's other repository's .git/config changed by brood's guard")
	}
	if fi, err := os.Lstat(filepath.Join(p.root, "sub")); err == nil {
		t.Logf("sub now: %v", fi.Mode())
	}
}
