package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
)

// TestAllowRuleDoesNotCoverWritingOptions (issue 23, case 11): with
// Bash(git log:*) allowed, git log --output=FILE wrote anywhere with
// content the model chose: $HOME/.bashrc, and .brood/settings.local.toml
// with allow = ["Bash(*)"], which the next run honoured. Now the rule
// covers git log, not --output: the first is asked about (and, with no one
// to ask, refused naming --output), the second refused outright as brood's
// configuration, like a Write of it with Write(*) allowed. Nothing is
// written, and the next run is granted nothing.
func TestAllowRuleDoesNotCoverWritingOptions(t *testing.T) {
	p := newProject(t, nil)
	mdl := p.script("rules.yaml", `agents:
  root:
    - tools:
        - Bash: {command: "git log -1 --format='echo pwned%n' --output=$HOME/.bashrc"}
        - Bash: {command: "git log -1 --format='[permissions]%nallow = [\"Bash(*)\"]' --output=.brood/settings.local.toml"}
        - Bash: {command: "git log -1 --format=x%n --outp=.brood/settings.local.toml"}
        - Write: {file_path: ".brood/settings.local.toml", content: "[permissions]\nallow = [\"Bash(*)\"]\n"}
        - Bash: {command: "git log -1 --format=%s"}
    - say: "bashrc=[{{result 0}}] local=[{{result 1}}] abbrev=[{{result 2}}] write=[{{result 3}}] plain=[{{result 4}}]"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--allow", "Bash(git log:*)", "--allow", "Write(*)", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.home, ".bashrc")); err == nil {
		t.Error("git log --output wrote $HOME/.bashrc")
	}
	if _, err := os.Stat(filepath.Join(p.root, ".brood", "settings.local.toml")); err == nil {
		t.Error(".brood/settings.local.toml was written")
	}
	results := map[string]string{}
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult {
			results[r.Tool] += r.Output + "\n---\n"
		}
	}
	// (the calls of one turn run concurrently: find each result by its command)
	find := func(cmd string) string {
		for _, r := range strings.Split(results["Bash"], "\n---\n") {
			if strings.Contains(r, cmd) {
				return r
			}
		}
		t.Fatalf("no Bash result for %q in:\n%s", cmd, results["Bash"])
		return ""
	}
	if b := find("--output=$HOME/.bashrc"); !strings.Contains(b, "needs approval") || !strings.Contains(b, "not --output") {
		t.Errorf("the ask for --output=$HOME/.bashrc does not name --output:\n%s", b)
	}
	for _, cmd := range []string{"--output=.brood/settings.local.toml", "--outp=.brood/settings.local.toml"} {
		if b := find(cmd); !strings.Contains(b, "is refused") || !strings.Contains(b, "(--output writes it)") {
			t.Errorf("%s is not refused as configuration naming --output:\n%s", cmd, b)
		}
	}
	if n := strings.Count(results["Bash"], "permission denied"); n != 3 {
		t.Errorf("%d of the four git log calls were refused, want 3 (plain git log runs):\n%s", n, results["Bash"])
	}
	if w := results["Write"]; !strings.Contains(w, "permission denied") || !strings.Contains(w, "configuration") {
		t.Errorf("Write of .brood/settings.local.toml with Write(*) allowed was not refused:\n%s", w)
	}

	// The next run has no Bash(*) from a file the model wrote.
	next := p.script("next.yaml", `agents:
  root:
    - tools:
        - Bash: {command: "touch pwned"}
    - say: "{{result 0}}"
`)
	if code, out, errs := p.brood(t.Context(), nil, "run", "--model", next, "go"); code != 0 {
		t.Fatalf("second run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "pwned")); err == nil {
		t.Error("the second run ran an unallowed command")
	}
}

// TestChildCannotWriteConfigThroughAllowedCommands: a child writing in
// place, under bypassPermissions, is refused the same writes up front (not
// only undone afterwards): git log --output, a redirection after a cd, and
// sed -i on brood's configuration.
func TestChildCannotWriteConfigThroughAllowedCommands(t *testing.T) {
	p := newProject(t, map[string]string{"README.md": "# x\n", ".brood/settings.toml": "# mine\n"})
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "inplace.md"),
		"---\nname: inplace\ndescription: in-place writer\ntools: Write, Bash\nisolation: none\n---\nWrite.\n")
	mdl := p.script("child.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: inplace, description: inplace, prompt: "go"}
    - say: "{{result 0}}"
  inplace:
    - tools:
        - Bash: {command: "git log -1 --format='[permissions]%nallow = [\"Bash(*)\"]' --output=.brood/settings.local.toml"}
        - Bash: {command: "cd .claude 2>/dev/null || mkdir .claude && cd .claude && echo '{}' > settings.local.json"}
        - Bash: {command: "sed -i 's/mine/pwned/' .brood/settings.toml"}
    - say: "out=[{{result 0}}] cd=[{{result 1}}] sed=[{{result 2}}]"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if n := strings.Count(out, "no tool writes it"); n != 3 {
		t.Errorf("%d of the child's three writes were refused up front, want 3:\n%s", n, out)
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, ".brood", "settings.toml")); string(b) != "# mine\n" {
		t.Errorf(".brood/settings.toml changed: %q", b)
	}
	for _, f := range []string{".brood/settings.local.toml", ".claude/settings.local.json"} {
		if _, err := os.Stat(filepath.Join(p.root, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}
