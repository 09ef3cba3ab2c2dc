package config_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// TestGetShowsHeldBack: brood config get names a project value the trust
// gate held back, and why, beside the value in effect; trusted, the
// project's value is the one in effect; the depth flags are taken as brood
// run takes them.
func TestGetShowsHeldBack(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "maxSubagentDepth = 2\n")
	untrusted := []string{"BROOD_TRUST_PROJECT="}

	d := p.Start(untrusted, "config", "get", "maxSubagentDepth")
	if code := d.Wait(t); code != 0 {
		t.Fatalf("exit %d: %s", code, d.Stderr.String())
	}
	errOut := d.Stderr.String()
	if got := d.Stdout.String(); got != "1\n" {
		t.Errorf("untrusted: stdout %q, want the default 1", got)
	}
	for _, w := range []string{"from default", "not from project", "settings.toml:1 sets 2, held back: the project is not trusted", "brood trust"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("untrusted: stderr lacks %q:\n%s", w, errOut)
		}
	}

	d = p.Start(untrusted, "config", "get", "maxSubagentDepth", "--json")
	d.Wait(t)
	var e struct {
		Value int
		Held  *struct {
			Value  int
			Origin struct{ Source string }
			Why    string
		}
	}
	if err := json.Unmarshal([]byte(d.Stdout.String()), &e); err != nil || e.Value != 1 || e.Held == nil || e.Held.Value != 2 || e.Held.Origin.Source != "project" {
		t.Errorf("--json: %v %s", err, d.Stdout.String())
	}

	d = p.Start(untrusted, "config", "list")
	d.Wait(t)
	if !strings.Contains(d.Stdout.String(), "(the project's 2 held back: not trusted)") {
		t.Errorf("config list does not say the project's value is held back:\n%s", d.Stdout.String())
	}

	d = p.Start(nil, "config", "get", "maxSubagentDepth") // BROOD_TRUST_PROJECT=1
	d.Wait(t)
	if d.Stdout.String() != "2\n" || strings.Contains(d.Stderr.String(), "held back") {
		t.Errorf("trusted: stdout %q, stderr %q; want the project's 2", d.Stdout.String(), d.Stderr.String())
	}

	for _, tc := range []struct {
		flags      []string
		want, from string
	}{
		{[]string{"--enable-subagents"}, "2\n", "from flag --enable-subagents"},
		{[]string{"--max-subagent-depth", "3"}, "3\n", "from flag --max-subagent-depth"},
	} {
		d = p.Start(untrusted, append([]string{"config", "get", "maxSubagentDepth"}, tc.flags...)...)
		d.Wait(t)
		if d.Stdout.String() != tc.want || !strings.Contains(d.Stderr.String(), tc.from) {
			t.Errorf("%v: stdout %q, stderr %q", tc.flags, d.Stdout.String(), d.Stderr.String())
		}
	}
}

// TestHelpSaysWhatClaudeSettingsGive (newuser P3-7): brood config --help
// says what a Claude Code settings.json contributes (not "permissions
// only"), and a project's held-back defaultMode is named by that file's
// key in the trust notice.
func TestHelpSaysWhatClaudeSettingsGive(t *testing.T) {
	p := clitest.NewProject(t)
	d := p.Start(nil, "config", "--help")
	if code := d.Wait(t); code != 0 {
		t.Fatalf("exit %d: %s", code, d.Stderr.String())
	}
	help := strings.Join(strings.Fields(d.Stdout.String()), " ")
	for _, w := range []string{"defaultMode as permissions.mode", "model, env and hooks", "their deny and ask rules apply at once", "a deny anywhere wins"} {
		if !strings.Contains(help, w) {
			t.Errorf("config --help lacks %q:\n%s", w, d.Stdout.String())
		}
	}
	if strings.Contains(help, "permissions only") {
		t.Errorf("config --help still says the Claude files give permissions only:\n%s", d.Stdout.String())
	}
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"permissions": {"defaultMode": "acceptEdits"}}`)
	d = p.Start([]string{"BROOD_TRUST_PROJECT="}, "config", "get", "permissions.mode")
	d.Wait(t)
	if got, errOut := d.Stdout.String(), d.Stderr.String(); got != "default\n" || !strings.Contains(errOut, "sets acceptEdits, held back") {
		t.Errorf("untrusted defaultMode: stdout %q, stderr does not say it is held back:\n%s", got, errOut)
	}
	d = p.Start([]string{"BROOD_TRUST_PROJECT="}, "trust")
	d.Wait(t)
	if out := d.Stdout.String() + d.Stderr.String(); !strings.Contains(out, "permissions.defaultMode acceptEdits") || strings.Contains(out, "permissions.mode acceptEdits") {
		t.Errorf("brood trust does not name the file's key, permissions.defaultMode:\n%s", out)
	}
}

// TestConfigEscapesRepositoryText: `brood config list` and `config get`
// write a project setting's value with the terminal's escapes taken out.
func TestConfigEscapesRepositoryText(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \"x\\u001b]0;CFG\\u0007y\\u202ez\"\n")
	for _, args := range [][]string{{"config", "list"}, {"config", "get", "model"}} {
		d := p.Start(nil, args...)
		d.Wait(t)
		out := d.Stdout.String() + d.Stderr.String()
		if !strings.Contains(out, "xy") {
			t.Errorf("brood %s: the value is gone:\n%s", strings.Join(args, " "), out)
		}
		for _, h := range []string{"\x1b", "\a", "\u202e"} {
			if strings.Contains(out, h) {
				t.Errorf("brood %s: output holds a raw %q:\n%q", strings.Join(args, " "), h, out)
			}
		}
	}
}
