package spawn_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/spawn"
)

// commitHook is the user's PreToolUse hook that commits in the project
// while a child runs: a ref moved during the run by someone else.
type commitHook struct {
	t    *testing.T
	root string
	env  []string
}

func (h commitHook) Filter() protocol.HookFilter {
	return protocol.HookFilter{protocol.HookPreToolUse: {""}}
}

func (h commitHook) Run(ctx context.Context, _ protocol.Hook) protocol.HookReply {
	cmd := exec.CommandContext(ctx, "git", "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-q", "--allow-empty", "-m", "mine, meanwhile")
	cmd.Dir, cmd.Env = h.root, h.env
	if out, err := cmd.CombinedOutput(); err != nil {
		h.t.Errorf("the user's commit: %v %s", err, out)
	}
	return protocol.HookReply{}
}

// TestRefMovedByYouIsNotCredited (report21): while an in-place writer
// that runs no command (it only edits a file) works, you commit in the
// same repository (here from your PreToolUse hook, during its run). The
// branch moved, but not by it: the result has no Refs changed line and
// the verdict keeps no ref, and a note says the refs changed while it ran,
// not by it.
func TestRefMovedByYouIsNotCredited(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: the record of a child's calls is its word, and brood credits it with every ref")
	}
	script := `
agents:
  general-purpose:
    - tools:
        - Edit: {file_path: 'main.go', old_string: 'package main', new_string: 'package main // edited'}
    - say: "## What I did\nedited\n## What I found\nnothing\n## Files changed\nmain.go\n## Problems\nnone"
`
	p := newProject(t, script, nil)
	must(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n"), 0o644))
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	exe, err := os.Executable()
	must(t, err)
	d, err := spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: p.settings(nil),
		Exe: exe, Env: p.env, MaxDepth: 1, SourceAgent: "root",
		ParentSystem: "You are the root agent.", ParentModel: "script:" + p.script,
		ParentTools: []string{"Read", "Write", "Edit", "Bash"},
		Permissions: dispatch.Permissions{Mode: "acceptEdits"},
		Extras:      brood(),
		ToolHooks:   commitHook{t: t, root: p.root, env: p.env},
	})
	must(t, err)
	out, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "edit"})
	must(t, err)
	if got := gitOut(t, p.root, "log", "-1", "--format=%s"); got != "mine, meanwhile" {
		t.Fatalf("the user's commit did not land during the run (HEAD is %q):\n%s", got, out.Text)
	}
	if strings.Contains(out.Text, "Refs changed:") {
		t.Errorf("the user's commit is credited to the child:\n%s", out.Text)
	}
	if !strings.Contains(out.Text, "git refs changed while it ran, not by it (it ran no command") {
		t.Errorf("the moved branch is not said:\n%s", out.Text)
	}
	tk, err := dispatch.LoadTask(p.root, out.TaskID)
	must(t, err)
	if tk.Verdict == nil || len(tk.Verdict.Refs) > 0 {
		t.Errorf("the verdict credits the child with refs: %+v", tk.Verdict)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	must(t, err)
	return strings.TrimSpace(string(out))
}
