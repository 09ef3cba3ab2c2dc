package attack_test

// The red team's holes of issue 23 closed by the holes2 branch, moved here
// from redteam_open_test.go so they guard the fix.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamSetuidInWorkTree: an in-place writer running as root
// leaves a setuid-root copy of a shell in the user's work tree (chmod u+s
// needs no capability on a file one owns, and a writer's syscall filter
// lets chmod through). no_new_privs stops it inside the child, not for
// the next local user who runs it. Every confined child's seccomp filter
// now refuses a mode with the set-ID bits.
func TestRedTeamSetuidInWorkTree(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("a setuid-root file needs a root brood")
	}
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	mdl := p.script("suid.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: suid, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "cp /bin/sh ./suid; chmod 4755 ./suid; mkdir sg; chmod 2775 sg; echo tried > tried.txt"}
    - say: "child done"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the child never tried: %v\n%s", err, errs)
	}
	for _, f := range []string{"suid", "sg"} {
		if fi, err := os.Stat(filepath.Join(p.root, f)); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("the in-place writer left %s with mode %v in the work tree", f, fi.Mode())
		}
	}
}
