package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
)

// TestReadDenyExpandedOncePerSpawn: a spawn expands its child's Read deny
// patterns once per tree its child is matched in, and hands the expansion
// to each of its uses (the warm layer's policy, a writer's view or copy,
// the child's policy, a read-only child's warm shape), where each used to
// walk the tree itself: an in-place writer's spawn walked it twice, a
// read-only child's twice, a worktree copy's writer's three times.
func TestReadDenyExpandedOncePerSpawn(t *testing.T) {
	p := newProject(t, warmScript, nil)
	for i := range 50 {
		must(t, os.MkdirAll(filepath.Join(p.root, "d", string(rune('a'+i%26))), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(p.root, "d", "a", "k.pem"), []byte("SECRET\n"), 0o644))
	git(t, p.root, "add", "README.md", ".gitignore")
	git(t, p.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	exe, err := os.Executable()
	must(t, err)
	d, err := spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: p.settings(func(s *settings.Settings) { s.Isolation.ForceWorktree = true }),
		Exe: exe, Env: p.env, Depth: 0, MaxDepth: 1, SourceAgent: "root",
		ParentSystem: "You are the root agent.", ParentModel: "script:" + p.script,
		ParentTools: []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "default", Deny: []string{"Read(**/*.pem)"}},
	})
	must(t, err)
	t.Cleanup(d.Close)
	for _, tc := range []struct {
		name  string
		spec  call.Spec
		walks int64 // the trees its child is matched in
	}{
		{"in-place writer", call.Spec{Agent: "general-purpose", Prompt: "do", Description: "do", Isolation: "none"}, 1},
		{"read-only", call.Spec{Agent: "explore", Prompt: "look", Description: "look"}, 1},
		{"worktree copy's writer (its copy and the real tree)", call.Spec{Agent: "general-purpose", Prompt: "do", Description: "do", Isolation: "worktree"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := spawn.DenyWalks(d)
			out, err := d.Call(context.Background(), tc.spec)
			must(t, err)
			if out.Record.Status != dispatch.StatusDone {
				t.Fatalf("status %s: %+v", out.Record.Status, out.Record)
			}
			if got := spawn.DenyWalks(d) - before; got != tc.walks {
				t.Errorf("the spawn expanded the Read deny rules %d times, want %d", got, tc.walks)
			}
		})
	}
}
