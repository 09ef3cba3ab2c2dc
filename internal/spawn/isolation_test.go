package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/settings"
)

// TestReadOnlyChildCannotWrite: the built-in explore has Bash, and the
// kernel keeps it read-only.
func TestReadOnlyChildCannotWrite(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("this kernel has no Landlock; TestReadOnlyWithoutKernelSandbox covers the fallback")
	}
	script := `
agents:
  explore:
    - tools:
        - Bash: {command: "echo x > file.txt"}
        - Bash: {command: "git log --oneline -1 || true; ls"}
    - say: "write: {{result 0}}\ninspect: {{result 1}}"
`
	p := newProject(t, script, nil)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "try to write"})
	must(t, err)
	// EROFS from its read-only mounts (its own mount namespace), or
	// EACCES from Landlock where it has none.
	if !strings.Contains(out.Text, "Permission denied") && !strings.Contains(out.Text, "Read-only file system") {
		t.Fatalf("the write was not denied by the sandbox:\n%s", out.Text)
	}
	if !strings.Contains(out.Text, "README.md") {
		t.Fatalf("inspection with Bash did not work:\n%s", out.Text)
	}
	if dispatch.Exists(filepath.Join(p.root, "file.txt")) {
		t.Fatal("file.txt exists: the read-only child wrote")
	}
	if !strings.HasPrefix(out.Record.Sandbox, "landlock") {
		t.Fatalf("result.json does not record the sandbox: %q", out.Record.Sandbox)
	}
	if len(out.Failures) > 0 {
		t.Fatalf("verification: %v", out.Failures)
	}
}

func TestIsolatedWritersInParallel(t *testing.T) {
	for _, force := range []bool{false, true} {
		name := "overlay"
		if force {
			name = "worktree"
		}
		t.Run(name, func(t *testing.T) {
			agents := map[string]string{
				"editor": "---\nname: editor\ndescription: edits\ntools: Read, Edit, Write, Bash\nisolation: worktree\n---\nYou edit.\n",
			}
			script := `
agents:
  editor:
    - cases:
        - if: "first"
          tools: [{Edit: {file_path: a.txt, old_string: "line 1", new_string: "line 1 by first"}}]
        - if: "second"
          tools: [{Edit: {file_path: a.txt, old_string: "line 9", new_string: "line 9 by second"}}]
        - if: "clash"
          tools: [{Edit: {file_path: a.txt, old_string: "line 1 by first", new_string: "line 1 clashing"}}]
      say: "nothing to do"
    - say: "edited: {{result 0}}"
`
			p := newProject(t, script, agents)
			var lines []string
			for i := 1; i <= 9; i++ {
				lines = append(lines, "line "+string(rune('0'+i)))
			}
			must(t, os.WriteFile(filepath.Join(p.root, "a.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			d := p.dispatcher(p.settings(func(s *settings.Settings) { s.Isolation.ForceWorktree = force }), 1, nil)

			var wg sync.WaitGroup
			outs := make([]*call.Result, 2)
			for i, which := range []string{"first", "second"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					o, err := d.Call(context.Background(), call.Spec{Agent: "editor", Prompt: "edit", Description: which})
					if err != nil {
						t.Error(err)
						return
					}
					outs[i] = o
				}()
			}
			wg.Wait()
			b, _ := os.ReadFile(filepath.Join(p.root, "a.txt"))
			if !strings.Contains(string(b), "line 1 by first") || !strings.Contains(string(b), "line 9 by second") {
				t.Fatalf("both patches should have landed:\n%s\n%s\n%s", b, outs[0].Text, outs[1].Text)
			}
			for _, o := range outs {
				if !strings.Contains(o.Text, "Isolation: "+name+" copy") {
					t.Errorf("not isolated by %s:\n%s", name, o.Text)
				}
				if !strings.Contains(o.Text, "applied to your tree") && !strings.Contains(o.Text, "merged into your tree") {
					t.Errorf("isolation outcome not reported:\n%s", o.Text)
				}
			}
			if st := git(t, p.root, "diff", "--cached", "--name-only"); st != "" {
				t.Fatalf("changes were staged: %q", st)
			}
			// A third writer edits a line the first one changed, from a
			// base where... both landed already, so change the same line
			// under it: the parent edits it while the child's copy differs.
			clash, err := d.Call(context.Background(), call.Spec{Agent: "editor", Prompt: "edit", Description: "clash"})
			must(t, err)
			if !strings.Contains(clash.Text, "applied") {
				t.Fatalf("a clean third edit should apply:\n%s", clash.Text)
			}
		})
	}
}

func TestConflictingWriterIsPreserved(t *testing.T) {
	agents := map[string]string{
		"editor": "---\nname: editor\ndescription: edits\ntools: Read, Edit, Bash\nisolation: worktree\n---\nYou edit.\n",
	}
	script := `
agents:
  editor:
    - tools:
        - Edit: {file_path: a.txt, old_string: "shared line", new_string: "child's version"}
        - Bash: {command: "while [ ! -e $BROOD_TEST_GATE ]; do sleep 0.02; done"}
    - say: "done"
`
	p := newProject(t, script, agents)
	must(t, os.WriteFile(filepath.Join(p.root, "a.txt"), []byte("shared line\n"), 0o644))
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	gate := filepath.Join(t.TempDir(), "gate")
	p.env = append(p.env, "BROOD_TEST_GATE="+gate)
	d := p.dispatcher(p.settings(nil), 1, nil)
	id, err := d.Start(context.Background(), call.Spec{Agent: "editor", Prompt: "edit"})
	must(t, err)
	// While the child works on its copy, the parent changes the same line.
	waitUntil(t, 30e9, func() bool {
		b, _ := os.ReadFile(filepath.Join(dispatch.Dir(p.root, id), dispatch.SessionFile))
		return strings.Contains(string(b), `"tool_result"`)
	})
	must(t, os.WriteFile(filepath.Join(p.root, "a.txt"), []byte("parent's version\n"), 0o644))
	must(t, os.WriteFile(gate, nil, 0o644))
	_, text, err := d.Output(context.Background(), id, 60e9)
	must(t, err)
	if !strings.Contains(text, "NOT applied") || !strings.Contains(text, "kept at") {
		t.Fatalf("conflict not reported with the kept copy:\n%s", text)
	}
	b, _ := os.ReadFile(filepath.Join(p.root, "a.txt"))
	if string(b) != "parent's version\n" {
		t.Fatalf("the parent's file was touched: %q", b)
	}
	// Resuming after a conflict starts from a fresh copy and keeps the old.
	again, err := d.Call(context.Background(), call.Spec{Resume: id, Prompt: "try again"})
	must(t, err)
	if strings.Contains(again.Text, "never started") || !strings.Contains(again.Text, "earlier run's copy is kept") {
		t.Fatalf("resume after a conflict:\n%s", again.Text)
	}
}

func TestIsolationOutsideGitRunsInPlace(t *testing.T) {
	agents := map[string]string{
		"editor": "---\nname: editor\ndescription: edits\ntools: Write\nisolation: worktree\n---\nYou edit.\n",
	}
	script := `
agents:
  editor:
    - tools: [{Write: {file_path: new.txt, content: "hi\n"}}]
    - say: "wrote it"
`
	p := newProject(t, script, agents)
	must(t, os.RemoveAll(filepath.Join(p.root, ".git")))
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "editor", Prompt: "write"})
	must(t, err)
	if !strings.Contains(out.Text, "not a git repository") || !dispatch.Exists(filepath.Join(p.root, "new.txt")) {
		t.Fatalf("expected an in-place run with a note:\n%s", out.Text)
	}
}

// TestReadOnlyWithoutKernelSandbox: where the kernel sandbox is not there
// (turned off here), a read-only agent loses Bash, the tool layer still
// refuses writes, and the result records that the sandbox was unavailable.
func TestReadOnlyWithoutKernelSandbox(t *testing.T) {
	agents := map[string]string{
		"sneaky": "---\nname: sneaky\ndescription: read-only with Bash\ntools: Read, Bash, Write\nsandbox: read-only\n---\nYou look.\n",
	}
	script := `
agents:
  sneaky:
    - tools:
        - Bash: {command: "echo x > file.txt"}
        - Write: {file_path: other.txt, content: "x"}
    - say: "bash: {{result 0}}\nwrite: {{result 1}}"
`
	p := newProject(t, script, agents)
	d := p.dispatcher(p.settings(func(s *settings.Settings) { s.Isolation.NoLandlock = true }), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "sneaky", Prompt: "try"})
	must(t, err)
	for _, f := range []string{"file.txt", "other.txt"} {
		if dispatch.Exists(filepath.Join(p.root, f)) {
			t.Fatalf("%s was written by a read-only agent:\n%s", f, out.Text)
		}
	}
	if !strings.Contains(out.Record.Sandbox, "unavailable") || !strings.Contains(out.Record.Sandbox, "Bash withdrawn") {
		t.Fatalf("result does not record the missing sandbox: %q", out.Record.Sandbox)
	}
}
