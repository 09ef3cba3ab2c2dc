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
	"github.com/broodhq/brood/internal/settings"
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

// buildHook is the user's PreToolUse hook that writes an ignored file in
// the project while a child runs, as an editor or a build does.
type buildHook struct {
	t    *testing.T
	root string
}

func (h buildHook) Filter() protocol.HookFilter {
	return protocol.HookFilter{protocol.HookPreToolUse: {""}}
}

func (h buildHook) Run(context.Context, protocol.Hook) protocol.HookReply {
	if err := os.WriteFile(filepath.Join(h.root, "app.log"), []byte("my build\n"), 0o644); err != nil {
		h.t.Errorf("the user's build: %v", err)
	}
	return protocol.HookReply{}
}

// hookedDispatcher is p's dispatcher with the user's hooks h.
func hookedDispatcher(t *testing.T, p *project, s settings.Settings, h spawn.ToolHooks) *spawn.Dispatcher {
	exe, err := os.Executable()
	must(t, err)
	d, err := spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: s,
		Exe: exe, Env: p.env, MaxDepth: 1, SourceAgent: "root",
		ParentSystem: "You are the root agent.", ParentModel: "script:" + p.script,
		ParentTools: []string{"Read", "Write", "Edit", "Bash"},
		Permissions: dispatch.Permissions{Mode: "acceptEdits"},
		Extras:      brood(),
		ToolHooks:   h,
	})
	must(t, err)
	return d
}

// TestIgnoredFileYouWriteDoesNotRejectAReadOnlyChild (report21): a
// read-only child on a machine without Landlock (its Bash withdrawn, its
// tree walked before and after it) is not rejected for an ignored file
// your build writes while it runs (here from your PreToolUse hook): the
// file is said on a note, as changed while it ran, by whom brood cannot
// tell.
func TestIgnoredFileYouWriteDoesNotRejectAReadOnlyChild(t *testing.T) {
	agents := map[string]string{
		"looker": "---\nname: looker\ndescription: reads\ntools: Read\n---\nYou look.\n",
	}
	script := `
agents:
  looker:
    - tools:
        - Read: {file_path: 'main.go'}
    - say: "## What I did\nread\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`
	p := newProject(t, script, agents)
	must(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(p.root, ".gitignore"), []byte("*.log\n"), 0o644))
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := hookedDispatcher(t, p, p.settings(func(s *settings.Settings) { s.Isolation.NoLandlock = true }), buildHook{t: t, root: p.root})
	out, err := d.Call(context.Background(), call.Spec{Agent: "looker", Prompt: "look"})
	must(t, err)
	if _, err := os.Stat(filepath.Join(p.root, "app.log")); err != nil {
		t.Fatalf("the user's build wrote nothing during the run: %v\n%s", err, out.Text)
	}
	if !strings.Contains(out.Text, `status="done"`) {
		t.Errorf("the read-only child is not done:\n%s", out.Text)
	}
	if !strings.Contains(out.Text, "ignored files changed while it ran (by it, or by your editor or build meanwhile: brood cannot tell): app.log") {
		t.Errorf("the ignored file is not said:\n%s", out.Text)
	}
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
	d := hookedDispatcher(t, p, p.settings(nil), commitHook{t: t, root: p.root, env: p.env})
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

// TestRefMovedThroughALinkIsCredited (reportfix P1): an in-place writer
// that runs no command but writes a ref through a path that does not say
// .git (a `gl -> .git` link the repository ships, or a gitfile's separate
// git dir) moved it: the ref is on Refs changed and in the verdict, never
// on the note that credits it away.
func TestRefMovedThroughALinkIsCredited(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: the record of a child's calls is its word, and brood credits it with every ref")
	}
	for _, tc := range []struct{ name, path string }{
		{"symlink", "gl/refs/heads/evil"},
		{"separate git dir", "gd/refs/heads/evil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, "", nil)
			must(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(p.root, ".gitignore"), []byte(".brood/\ngd/\n"), 0o644))
			if tc.name == "symlink" {
				must(t, os.Symlink(".git", filepath.Join(p.root, "gl")))
			} else {
				git(t, p.root, "init", "-q", "--separate-git-dir="+filepath.Join(p.root, "gd"))
			}
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			sha := gitOut(t, p.root, "rev-parse", "HEAD")
			script := "agents:\n  general-purpose:\n    - tools:\n        - Write: {file_path: '" + tc.path + "', content: \"" + sha + "\\n\"}\n" +
				"    - say: \"## What I did\\nwrote\\n## What I found\\nnothing\\n## Files changed\\nnone\\n## Problems\\nnone\"\n"
			must(t, os.WriteFile(p.script, []byte(script), 0o644))
			d := hookedDispatcher(t, p, p.settings(nil), nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "write"})
			must(t, err)
			if gitOut(t, p.root, "rev-parse", "--verify", "-q", "refs/heads/evil") != sha {
				t.Fatalf("the child's write moved no ref:\n%s", out.Text)
			}
			if strings.Contains(out.Text, "not by it") || !strings.Contains(out.Text, "Refs changed:") || !strings.Contains(out.Text, "refs/heads/evil") {
				t.Errorf("the ref the child moved is not credited to it:\n%s", out.Text)
			}
			tk, err := dispatch.LoadTask(p.root, out.TaskID)
			must(t, err)
			if tk.Verdict == nil || len(tk.Verdict.Refs) == 0 {
				t.Errorf("the verdict credits the child with no ref: %+v", tk.Verdict)
			}
		})
	}
}

// writeHook is a PreToolUse hook that writes files in the project while
// a child runs: it stands in for a read-only child's own write channel
// (an MCP tool's, say).
type writeHook struct {
	t     *testing.T
	root  string
	files map[string]string
}

func (h writeHook) Filter() protocol.HookFilter {
	return protocol.HookFilter{protocol.HookPreToolUse: {""}}
}

func (h writeHook) Run(context.Context, protocol.Hook) protocol.HookReply {
	for name, body := range h.files {
		p := filepath.Join(h.root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			h.t.Errorf("the write: %v", err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			h.t.Errorf("the write: %v", err)
		}
	}
	return protocol.HookReply{}
}

// TestReadOnlyChildsIgnoreRulesAreNotBelieved (reportfix P2): a
// read-only child without Landlock whose tree gets files the base's
// rules do not ignore is rejected, when it ignores them itself (a new
// src/.gitignore `*`) and when they are new in a directory git listed
// whole only because each of its files matched (config/ under *.env).
func TestReadOnlyChildsIgnoreRulesAreNotBelieved(t *testing.T) {
	agents := map[string]string{
		"looker": "---\nname: looker\ndescription: reads\ntools: Read\n---\nYou look.\n",
	}
	script := `
agents:
  looker:
    - tools:
        - Read: {file_path: 'main.go'}
    - say: "## What I did\nread\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"its own gitignore", map[string]string{"src/.gitignore": "*\n", "src/evil.go": "package evil\n"}},
		{"a dir listed by its files", map[string]string{"config/evil.go": "package evil\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, script, agents)
			must(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n"), 0o644))
			must(t, os.MkdirAll(filepath.Join(p.root, "src"), 0o755))
			must(t, os.MkdirAll(filepath.Join(p.root, "config"), 0o755))
			must(t, os.WriteFile(filepath.Join(p.root, "src", "a.go"), []byte("package src\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(p.root, "config", "a.env"), []byte("K=v\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(p.root, ".gitignore"), []byte(".brood/\n*.env\n"), 0o644))
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			d := hookedDispatcher(t, p, p.settings(func(s *settings.Settings) { s.Isolation.NoLandlock = true }), writeHook{t: t, root: p.root, files: tc.files})
			out, err := d.Call(context.Background(), call.Spec{Agent: "looker", Prompt: "look"})
			must(t, err)
			if strings.Contains(out.Text, `status="done"`) {
				t.Errorf("the read-only child that wrote files the base does not ignore is done:\n%s", out.Text)
			}
			if _, note, _ := strings.Cut(out.Text, "brood cannot tell): "); strings.Contains(strings.SplitN(note, "\n", 2)[0], "evil.go") {
				t.Errorf("files the base does not ignore are set aside as ignored:\n%s", out.Text)
			}
		})
	}
}
