package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalHooksOutsideGitNeedTrust: a project unpacked from a tarball (no
// git) ships a SessionStart hook in .claude/settings.local.json and an allow
// rule in .brood/settings.local.toml. Outside a work tree nothing tells a
// person's own local file from a shipped one, so neither takes effect until
// `brood trust`; the notice names them.
func TestLocalHooksOutsideGitNeedTrust(t *testing.T) {
	p := newProject(t, map[string]string{
		"README.md": "# unpacked\n",
		".claude/settings.local.json": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo started >> hook.log"}]}]}}
`,
		".brood/settings.local.toml": "[permissions]\nallow = [\"Bash(echo:*)\"]\n",
	})
	if err := os.RemoveAll(filepath.Join(p.root, ".git")); err != nil {
		t.Fatal(err)
	}
	mdl := p.script("s.yaml", "agents:\n  root:\n    - tools:\n        - Bash: {command: \"echo ROOTBASH\"}\n    - say: \"bash=[{{result 0}}]\"\n")
	hookLog := filepath.Join(p.root, "hook.log")
	run := func() (string, string) {
		t.Helper()
		os.Remove(hookLog)
		code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "go")
		if code != 0 {
			t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
		}
		return out, errs
	}
	out, errs := run()
	if _, err := os.Stat(hookLog); err == nil {
		t.Error("a SessionStart hook in an untracked settings.local.json ran outside git with no trust")
	}
	if strings.Contains(out, "bash=[ROOTBASH") {
		t.Errorf("an allow rule in settings.local.toml took effect outside git with no trust:\n%s", out)
	}
	for _, want := range []string{".claude/settings.local.json", ".brood/settings.local.toml", "hooks SessionStart", "brood trust"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the notice does not name %q:\n%s", want, errs)
		}
	}
	if code, gout, gerrs := p.brood(t.Context(), nil, "trust"); code != 0 || !strings.Contains(gout, "settings.local.json") {
		t.Fatalf("brood trust: code %d\n%s\n%s", code, gout, gerrs)
	}
	out, errs = run()
	if b, err := os.ReadFile(hookLog); err != nil || !strings.Contains(string(b), "started") {
		t.Errorf("the trusted hook did not run: %q %v\n%s", b, err, errs)
	}
	if !strings.Contains(out, "bash=[ROOTBASH") {
		t.Errorf("the trusted allow rule did not apply:\n%s\n%s", out, errs)
	}
}
