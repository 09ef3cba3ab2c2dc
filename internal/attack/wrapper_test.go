package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrappedShellCannotHideConfigWrite (red team): a child's Bash call
// that wraps `sh -c` in timeout or nice (`timeout 5 sh -c '... >
// .claude/settings.json'`) is refused by the configuration guard as the
// bare `sh -c` is: the wrapper's number is skipped, "sh" is the program
// and its script is read. Before, "sh" passed for a number (as "5s"
// does), the script was taken for the program, and the guard saw no write.
func TestWrappedShellCannotHideConfigWrite(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	mdl := p.script("wrapped.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: wrapped, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "timeout 5 sh -c 'mkdir -p .claude; echo pwned > .claude/settings.json'"}
    - tools:
        - Bash: {command: "nice -n 5 sh -c 'echo pwned >> .git/config'"}
    - tools:
        - Bash: {command: "echo tried > tried.txt"}
    - say: "child done"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the child never got past its attempts (no tried.txt: %v)\n%s", err, errs)
	}
	got := bashOutputs(t, p, "")
	for _, path := range []string{".claude/settings.json", ".git/config"} {
		if !strings.Contains(got, path+" is configuration") {
			t.Errorf("the guard did not refuse the wrapped write to %s; the child's tool results:\n%s", path, got)
		}
	}
	if _, err := os.Stat(filepath.Join(p.root, ".claude", "settings.json")); err == nil {
		t.Errorf("the child wrote .claude/settings.json")
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, ".git", "config")); strings.Contains(string(b), "pwned") {
		t.Errorf("the child wrote .git/config:\n%s", b)
	}
}
