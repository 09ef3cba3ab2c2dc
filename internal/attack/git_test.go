package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// TestChildsGitConfigNeverRunsInTheParent is issue 23's second case: an
// in-place writer sets core.fsmonitor to a script of its own, adds
// .git/hooks/pre-commit, and configures a clean filter for the file it
// edits. The parent's own git (the tree snapshot before and after every
// writer) runs none of them; the task's result says, on a line of its
// own, that the git configuration was changed and undone; the hook is
// gone, so the user's next `git commit` runs nothing of the child's; the
// child's ordinary work stays.
//
// Where the kernel already stops an in-place writer writing .git (issue 23's
// in-place confinement), the child's writes fail: nothing to undo, and
// nothing may run either way. Each write says in the child's result
// whether it happened, and the report is required for what did.
func TestChildsGitConfigNeverRunsInTheParent(t *testing.T) {
	p := newProject(t, nil)
	marks := t.TempDir()
	fsmon, filter, hook := filepath.Join(marks, "fsmonitor-ran"), filepath.Join(marks, "filter-ran"), filepath.Join(marks, "hook-ran")
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "inplace.md"),
		"---\nname: inplace\ndescription: in-place writer\ntools: Bash\nisolation: none\n---\nWrite.\n")
	mdl := p.script("git.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: inplace, description: inplace, prompt: "go"}
    - say: "done"
  inplace:
    - tools:
        - Bash: {command: "mkdir -p tools && printf '#!/bin/sh\\ntouch `+fsmon+`\\n' > tools/fsmon.sh && chmod +x tools/fsmon.sh && git config core.fsmonitor \"$PWD/tools/fsmon.sh\" && echo FSMONITOR-\"\"SET"}
        - Bash: {command: "printf '#!/bin/sh\\ntouch `+hook+`\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo HOOK-\"\"SET"}
        - Bash: {command: "printf '*.md filter=evil\\n' > .gitattributes && git config filter.evil.clean 'sh -c \"touch `+filter+`; cat\"' && echo FILTER-\"\"SET"}
        - Bash: {command: "echo changed >> README.md && echo ok > work.txt"}
    - say: "r0={{result 0}} r1={{result 1}} r2={{result 2}}"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	for _, m := range []string{fsmon, filter} {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("%s: the child's program ran (the parent's git, or brood's in the child)", filepath.Base(m))
		}
	}
	var text string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			text = r.Output
		}
	}
	if text == "" {
		t.Fatal("no Task result in the root's transcript")
	}
	var changed []string
	for _, c := range []struct{ said, path string }{{"FSMONITOR-SET", ".git/config"}, {"HOOK-SET", ".git/hooks/pre-commit"}} {
		if strings.Contains(text, c.said) {
			changed = append(changed, c.path)
		}
	}
	if len(changed) > 0 {
		if !strings.Contains(text, "\nConfiguration: ") || !strings.Contains(text, "git configuration changes refused and undone: ") {
			t.Errorf("the result has no line of its own about the git configuration:\n%s", text)
		}
		for _, c := range changed {
			if !strings.Contains(text, c) {
				t.Errorf("the result does not name %s:\n%s", c, text)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(p.root, "work.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("the child's ordinary work was lost: %q %v", b, err)
	}
	// The repository is as the user left it: plain git (the user's) sees no
	// fsmonitor, no filter, and its next commit runs no hook.
	for _, key := range []string{"core.fsmonitor", "filter.evil.clean"} {
		if v, err := exec.Command("git", "-C", p.root, "config", "--get", key).Output(); err == nil {
			t.Errorf("%s = %s is still configured", key, v)
		}
	}
	if _, err := os.Lstat(filepath.Join(p.root, ".git", "hooks", "pre-commit")); err == nil {
		t.Error(".git/hooks/pre-commit is still there")
	}
	p.git("add", "work.txt")
	p.git("commit", "-q", "-m", "the user's next commit")
	if _, err := os.Stat(hook); err == nil {
		t.Error("the user's next git commit ran the child's hook")
	}
	// A later run's snapshots run nothing either.
	if code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go"); code != 0 {
		t.Fatalf("second run: code %d\n%s\n%s", code, out, errs)
	}
	for _, m := range []string{fsmon, filter} {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("%s: the child's program ran in the second run", filepath.Base(m))
		}
	}
}
