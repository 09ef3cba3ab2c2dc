package attack_test

import (
	"os"
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
	// Two hooks under the guard's 1 MiB a file, together more than the
	// record holds.
	big := strings.Repeat("# keep\n", 600<<10/7)
	for _, h := range []string{"pre-commit", "pre-push"} {
		writeFile(t, filepath.Join(p.root, ".git", "hooks", h), "#!/bin/sh\n"+big)
	}
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
}
