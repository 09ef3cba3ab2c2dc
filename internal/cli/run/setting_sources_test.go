package run_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestSettingSources: --setting-sources chooses which settings files are
// read, as Claude Code's: user (~/.claude/settings.json), project
// (.claude/settings.json) and local (.claude/settings.local.json), each
// here denying one tool by name (which takes it off the model's list);
// "" reads none; a source that is none of the three exits 1 naming it.
func TestSettingSources(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"permissions":{"deny":["Write"]}}`)
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"permissions":{"deny":["Edit"]}}`)
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.local.json"), `{"permissions":{"deny":["Glob"]}}`)
	mdl := p.Script("s.yaml", echoScript)
	for _, tc := range []struct {
		name    string
		args    []string
		offered []string
		gone    []string
	}{
		{"every source", nil, nil, []string{"Write", "Edit", "Glob"}},
		{"user", []string{"--setting-sources", "user"}, []string{"Edit", "Glob"}, []string{"Write"}},
		{"project,local", []string{"--setting-sources", "project,local"}, []string{"Write"}, []string{"Edit", "Glob"}},
		{"local", []string{"--setting-sources", "local"}, []string{"Write", "Edit"}, []string{"Glob"}},
		{"none", []string{"--setting-sources", ""}, []string{"Write", "Edit", "Glob"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-p", "--model", mdl}, tc.args...)
			code, out, errOut := p.Brood(append(args, "--", "Say hello")...)
			if code != 0 || strings.Contains(errOut, "accepted;") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			_, after, _ := strings.Cut(out, "TOOLS=")
			list, _, _ := strings.Cut(after, " ")
			tools := strings.Split(list, ",")
			for _, n := range tc.offered {
				if !slices.Contains(tools, n) {
					t.Errorf("%s is not offered: %s", n, list)
				}
			}
			for _, n := range tc.gone {
				if slices.Contains(tools, n) {
					t.Errorf("%s is offered: %s", n, list)
				}
			}
		})
	}
	code, _, errOut := p.Brood("-p", "--model", mdl, "--setting-sources", "user,team", "--", "Say hello")
	if code != 1 || !strings.Contains(errOut, `--setting-sources: invalid setting source "team"; valid options are: user, project, local`) {
		t.Errorf("a bad source: exit %d, stderr %s", code, errOut)
	}
}
