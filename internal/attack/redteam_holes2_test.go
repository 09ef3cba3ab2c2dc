package attack_test

// The red team's holes of issue 23 closed by the holes2 branch, moved here
// from redteam_open_test.go so they guard the fix.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
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
	p.childBash("suid", "cp /bin/sh ./suid; chmod 4755 ./suid; mkdir sg; chmod 2775 sg; echo tried > tried.txt")
	for _, f := range []string{"suid", "sg"} {
		if fi, err := os.Stat(filepath.Join(p.root, f)); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("the in-place writer left %s with mode %v in the work tree", f, fi.Mode())
		}
	}
}

// TestRedTeamNestedRepoFsmonitor: an in-place writer makes a nested
// repository in the work tree (sub/.git/config naming an fsmonitor) and
// commits it as a gitlink. Nothing is reported or put back, and the
// user's next `git status` in their own repository recurses into the
// submodule and runs the child's program unconfined: case 2 through a
// .git/config the configuration guard did not watch. The guard now takes
// every nested repository's configuration in, and removes what the child
// made.
func TestRedTeamNestedRepoFsmonitor(t *testing.T) {
	needLandlock(t)
	marker := filepath.Join(t.TempDir(), "ran")
	p := newProject(t, map[string]string{"README.md": "# r\n", "attack.sh": `printf '#!/bin/sh\necho RAN >> %s\n' "$1" > run.sh; chmod +x run.sh
git init -q sub && cd sub && git -c user.email=c@x -c user.name=c commit -q --allow-empty -m x && git config core.fsmonitor "$(dirname "$PWD")/run.sh"; cd ..
git add sub run.sh 2>/dev/null; git -c user.email=c@x -c user.name=c commit -qm sub
echo tried > tried.txt
`})
	p.childBash("nest", "sh attack.sh "+marker)
	user := exec.Command("git", "status", "--short")
	user.Dir = p.root
	user.Env = append(os.Environ(), "HOME="+p.home)
	outb, _ := user.CombinedOutput()
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the user's next git status ran the child's fsmonitor from a nested repository (%q)\n%s", b, outb)
	}
	var text string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			text = r.Output
		}
	}
	if !strings.Contains(text, "\nConfiguration: ") || !strings.Contains(text, "git configuration changes refused and undone: ") || !strings.Contains(text, "sub/.git/config") {
		t.Errorf("the Task result does not report the nested repository's configuration on its Configuration line:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(p.root, "sub", ".git", "config")); err == nil {
		t.Errorf("sub/.git/config, made by the child, is still there")
	}
}
