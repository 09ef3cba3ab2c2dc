package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The red team's variants of issue 23 (the cases the first attack tests
// did not try), each through the real CLI.

// commondirAttack makes a git directory of its own in the child's TMPDIR
// (a copy of the real one's objects and refs, a config naming an
// fsmonitor, a pre-commit hook; both append to $1) and points the real
// .git at it with .git/commondir, an entry a git directory does not have
// until someone makes it (so no read-only bind covers it).
const commondirAttack = `E=$TMPDIR/evil; mkdir -p $E/hooks $E/objects $E/refs
cp -r .git/objects/. $E/objects/; cp -r .git/refs/. $E/refs/; cp .git/HEAD $E/
printf '#!/bin/sh\necho RAN >> %s\n' "$1" > $E/run.sh; chmod +x $E/run.sh
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = %s\n' "$E/run.sh" > $E/config
cp $E/run.sh $E/hooks/pre-commit
g=.git; echo "$E" > "$g/commondir" && echo WROTE-commondir
echo tried > tried.txt
`

// TestInPlaceCommondirRedirect (red team): an in-place writer cannot
// redirect the repository's common git directory (config, hooks) to one
// of its own with .git/commondir, so that the user's next `git status`
// runs its fsmonitor and `git commit` its hook. The parent's configuration
// guard puts .git back as it was.
func TestInPlaceCommondirRedirect(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"attack.sh": commondirAttack, "README.md": "# r\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	mdl := p.script("commondir.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: redirect, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "sh attack.sh `+marker+`"}
    - say: "child done"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the child never tried (no tried.txt: %v)\n%s", err, errs)
	}
	if b, err := os.ReadFile(filepath.Join(p.root, ".git", "commondir")); err == nil {
		t.Errorf("the child's .git/commondir is left in the user's repository: %q", b)
	}
	// The user's own git, after the run: nothing of the child's runs.
	writeFile(t, filepath.Join(p.root, "README.md"), "# changed\n")
	user := exec.Command("git", "-c", "user.email=u@x", "-c", "user.name=u", "commit", "-qam", "user")
	user.Dir = p.root
	user.Env = append(os.Environ(), "HOME="+p.home)
	outb, _ := user.CombinedOutput()
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the user's next git commit ran the child's programs (%q)\n%s", b, outb)
	}
}
