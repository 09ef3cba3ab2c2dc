package delegate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestChildPolicyHidesMCPTokens: every class of child (reader, isolated
// writer, in-place writer) has ~/.config/brood/mcp, where `brood mcp
// --http` keeps its token, among the paths it may not read, by its real
// path when ~/.config/brood is a link.
func TestChildPolicyHidesMCPTokens(t *testing.T) {
	home := t.TempDir()
	dots := filepath.Join(home, "dots", "brood")
	if err := os.MkdirAll(dots, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dots, filepath.Join(home, ".config", "brood")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	real, err := filepath.EvalSymlinks(dots)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(real, "mcp")
	work := t.TempDir()
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true, Workspace: work}},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: work, Workspace: work}},
		{"in-place writer", dispatch.Envelope{Workspace: work, ProjectRoot: work}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := childPolicy(&tc.env, t.TempDir())
			if !slices.Contains(p.Hidden, want) {
				t.Errorf("Hidden = %q, want it to hold %s", p.Hidden, want)
			}
		})
	}
}

// TestChildEnvDropsMCPToken: BROOD_MCP_TOKEN never reaches a child.
func TestChildEnvDropsMCPToken(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", envMCPToken + "=0123456789abcdef0123", "HOME=/h"})
	if strings.Contains(strings.Join(got, "\n"), envMCPToken) {
		t.Errorf("childEnv kept %s: %q", envMCPToken, got)
	}
	if len(got) != 2 {
		t.Errorf("childEnv dropped more than the token: %q", got)
	}
}
