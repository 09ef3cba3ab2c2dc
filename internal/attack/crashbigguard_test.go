package attack_test

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBigGuardRefusesInPlaceWriter: an in-place writer whose configuration
// guard's record would be larger than the next brood reads back (1 MiB)
// is not started: a brood killed while it ran would leave .git as it made
// it, with nothing on disk to put it back. The run says why in one line,
// and the child never ran a tool.
func TestBigGuardRefusesInPlaceWriter(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	// Submodules' hooks under the guard's 1 MiB a file, together more
	// than the record holds even deflated (random bytes), and a small one
	// of .git/hooks: the line names the bulk's place first.
	for i := range 3 {
		junk := make([]byte, 400<<10)
		_, _ = rand.Read(junk)
		mod := filepath.Join(p.root, ".git", "modules", "s"+strconv.Itoa(i))
		writeFile(t, filepath.Join(mod, "HEAD"), "ref: refs/heads/main\n")
		writeFile(t, filepath.Join(mod, "hooks", "pre-commit"), "#!/bin/sh\n"+string(junk))
	}
	writeFile(t, filepath.Join(p.root, ".git", "hooks", "pre-push"), "#!/bin/sh\nexit 0\n")
	mdl := p.script("big.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: big, prompt: "go", isolation: none}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote("echo ran > ran.txt")+`}
    - say: "child done"
`)
	_, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if _, err := os.Stat(filepath.Join(p.root, "ran.txt")); err == nil {
		t.Errorf("the in-place writer ran with a guard no record keeps\nstdout: %s\nstderr: %s", out, errs)
	}
	t.Logf("stderr: %s\nresults: %q", errs, p.taskResults())
	all := out + errs + strings.Join(p.taskResults(), "\n")
	if !strings.Contains(all, "cannot be kept") || !strings.Contains(all, "it is not started") {
		t.Errorf("no line says why the writer was not started\nstdout: %s\nstderr: %s", out, errs)
	}
	if !strings.Contains(all, "largest first: .git/modules/*/hooks (1201 KB), ") {
		t.Errorf("the line does not name where the bytes are (.git/modules/*/hooks first)\nstdout: %s\nstderr: %s", out, errs)
	}
}

// TestSubmoduleSamplesRunInPlaceWriter: 30 submodules' git dirs, each
// with git's stock hooks/*.sample (git never runs them), leave an
// in-place writer's guard record small enough to keep: the writer runs
// (review P2-1: from about 23 it was refused).
func TestSubmoduleSamplesRunInPlaceWriter(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	for i := range 30 {
		dir := filepath.Join(p.root, ".git", "modules", "s"+strconv.Itoa(i))
		if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init --bare %s: %v: %s", dir, err, out)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(p.root, ".git", "modules", "s0", "hooks", "*.sample")); len(m) == 0 {
		t.Skip("this git installs no hook samples")
	}
	mdl := p.script("samples.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: samples, prompt: "go", isolation: none}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote("echo ran > ran.txt")+`}
    - say: "child done"
`)
	_, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if _, err := os.Stat(filepath.Join(p.root, "ran.txt")); err != nil {
		t.Errorf("the in-place writer did not run beside 30 submodules' stock hooks\nstdout: %s\nstderr: %s\nresults: %q", out, errs, p.taskResults())
	}
}
