package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	personalHook = `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo started >> hook.log"}]}]}}
`
	personalToml = "[permissions]\nallow = [\"Bash(echo:*)\"]\n\n[isolation]\nno_landlock = true\n"
)

// gitAt runs git in dir with the project's environment (and file
// transports allowed, for a submodule of a local repository).
func (p *project) gitAt(dir string, args ...string) {
	p.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = p.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

// submodule makes dir (in the project) a committed submodule whose own
// commit holds the file name with body; its source repository is in the
// test's home.
func (p *project) submodule(dir, name, body string) {
	p.t.Helper()
	src := filepath.Join(p.home, "src", strings.TrimPrefix(dir, "."))
	writeFile(p.t, filepath.Join(src, name), body)
	p.gitAt(src, "init", "-q")
	p.gitAt(src, "add", "-f", name)
	p.gitAt(src, "commit", "-qm", "settings")
	p.gitAt(p.root, "submodule", "add", "-q", src, dir)
	p.gitAt(p.root, "commit", "-qm", "submodule")
}

// TestShippedPersonalSettingsNeedTrust (review 18, X1): a repository that
// commits `.claude -> cfg` with cfg/settings.local.json, or makes .claude
// or .brood a submodule holding settings.local.json / settings.local.toml,
// has git call the file untracked (git looks through neither). brood took
// it for the person's own file and honoured it without trust: the hook ran
// on the first `brood run` in the clone, and the allow rule and
// isolation.no_landlock (the kernel sandbox off) took effect silently. It
// is the repository's file: held back until trusted, with the notice, and
// honoured once trusted.
func TestShippedPersonalSettingsNeedTrust(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(p *project)
		file  string
		said  []string
	}{
		{"claude link", func(p *project) {
			writeFile(t, filepath.Join(p.root, "cfg", "settings.local.json"), personalHook)
			if err := os.Symlink("cfg", filepath.Join(p.root, ".claude")); err != nil {
				t.Fatal(err)
			}
			p.git("add", "-f", ".claude", "cfg")
			p.git("commit", "-qm", "settings")
		}, ".claude/settings.local.json", []string{"hooks SessionStart"}},
		{"claude submodule", func(p *project) {
			p.submodule(".claude", "settings.local.json", personalHook)
		}, ".claude/settings.local.json", []string{"hooks SessionStart"}},
		{"brood submodule", func(p *project) {
			p.submodule(".brood", "settings.local.toml", personalToml)
		}, ".brood/settings.local.toml", []string{"permissions.allow Bash(echo:*)", "isolation.no_landlock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# cloned\n"})
			tc.setup(p)
			mdl := p.script("s.yaml", "agents:\n  root:\n    - tools:\n        - Bash: {command: \"echo ROOTBASH\"}\n    - say: \"bash=[{{result 0}}]\"\n")
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "go")
			if code != 0 {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			if _, err := os.Stat(filepath.Join(p.root, "hook.log")); err == nil {
				t.Errorf("the repository's SessionStart hook in %s ran with no trust", tc.file)
			}
			if strings.Contains(out, "bash=[ROOTBASH") {
				t.Errorf("the repository's allow rule in %s took effect with no trust:\n%s", tc.file, out)
			}
			for _, want := range append([]string{tc.file, "brood trust"}, tc.said...) {
				if !strings.Contains(errs, want) {
					t.Errorf("the notice does not name %q:\n%s", want, errs)
				}
			}
			// Trusted, it is honoured like any project file.
			if code, gout, gerrs := p.brood(t.Context(), nil, "trust"); code != 0 || !strings.Contains(gout, tc.file) {
				t.Fatalf("brood trust: code %d\n%s\n%s", code, gout, gerrs)
			}
			if code, out, errs = p.brood(t.Context(), nil, "run", "--model", mdl, "go"); code != 0 || strings.Contains(errs, "not applied") {
				t.Fatalf("trusted run: code %d\n%s\n%s", code, out, errs)
			}
			_, err := os.Stat(filepath.Join(p.root, "hook.log"))
			if ran := err == nil || strings.Contains(out, "bash=[ROOTBASH"); !ran {
				t.Errorf("the trusted %s was not honoured:\n%s\n%s", tc.file, out, errs)
			}
		})
	}
}
