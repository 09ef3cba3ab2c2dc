package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestInPlaceWriterCannotHideByCommitting (redteam19 P1-3): an in-place
// writer that commits what it changed (a commit, an amend whose reflog it
// expires, a stash), moves a branch, makes a tag, or edits a nested
// repository or a submodule (whose files the top's git status never
// lists), and says it changed nothing, has its change listed by the
// parent all the same: on Files changed, and every ref it made, moved or
// deleted on a Refs changed line.
func TestInPlaceWriterCannotHideByCommitting(t *testing.T) {
	const id = "git -c user.name=e -c user.email=e@e "
	cases := []struct {
		name, cmd string
		setup     func(t *testing.T, root string)
		files     string // the Files changed line's list ("" none)
		refs      []string
		absent    []string
	}{
		{name: "commit", cmd: `echo "// evil" >> main.go && ` + id + `commit -qam innocent`,
			files: "main.go", refs: []string{"Refs changed: refs/heads/"}},
		{name: "amend and reflog expire", cmd: `echo "// backdoor" >> main.go && ` + id + `commit -q --amend --no-edit -a && git reflog expire --expire=now --all`,
			files: "main.go", refs: []string{"(rewritten: "}},
		{name: "stash", cmd: `echo "// evil2" >> main.go && ` + id + `stash -q`,
			refs: []string{"Refs changed: refs/stash new"}},
		{name: "moved branch", cmd: `git update-ref refs/heads/other HEAD`,
			setup: func(t *testing.T, root string) {
				git(t, root, "branch", "other", "HEAD~1")
			},
			refs: []string{"Refs changed: refs/heads/other "}, absent: []string{"Files changed:", "rewritten"}},
		{name: "tag", cmd: `git tag v1.0 HEAD`,
			refs: []string{"Refs changed: refs/tags/v1.0 new"}, absent: []string{"Files changed:"}},
		{name: "nested clone", cmd: `echo "// backdoor" >> lib/lib.go`,
			setup: func(t *testing.T, root string) {
				lib := filepath.Join(root, "lib")
				must(t, os.MkdirAll(lib, 0o755))
				git(t, lib, "init", "-q")
				must(t, os.WriteFile(filepath.Join(lib, "lib.go"), []byte("package lib\n"), 0o644))
				git(t, lib, "add", "-A")
				git(t, lib, "commit", "-qm", "lib")
			},
			files: "lib/lib.go"},
		{name: "nested clone commit", cmd: `cd lib && echo "// backdoor" >> lib.go && ` + id + `commit -qam x`,
			setup: func(t *testing.T, root string) {
				lib := filepath.Join(root, "lib")
				must(t, os.MkdirAll(lib, 0o755))
				git(t, lib, "init", "-q")
				must(t, os.WriteFile(filepath.Join(lib, "lib.go"), []byte("package lib\n"), 0o644))
				git(t, lib, "add", "-A")
				git(t, lib, "commit", "-qm", "lib")
			},
			files: "lib/lib.go", refs: []string{"Refs changed: lib: refs/heads/"}},
		{name: "submodule", cmd: `echo "// b2" >> sm/x.go`,
			setup: func(t *testing.T, root string) {
				src := t.TempDir()
				git(t, src, "init", "-q")
				must(t, os.WriteFile(filepath.Join(src, "x.go"), []byte("package x\n"), 0o644))
				git(t, src, "add", "-A")
				git(t, src, "commit", "-qm", "x")
				git(t, root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sm")
				git(t, root, "commit", "-qm", "sm")
			},
			files: "sm/x.go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := `
agents:
  general-purpose:
    - tools:
        - Bash: {command: '` + c.cmd + `'}
    - say: "## What I did\nlooked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`
			p := newProject(t, script, nil)
			must(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n"), 0o644))
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			must(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n\n// mine\n"), 0o644))
			git(t, p.root, "commit", "-qam", "my work")
			if c.setup != nil {
				c.setup(t, p.root)
			}
			d := p.dispatcher(p.settings(nil), 1, nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "look"})
			must(t, err)
			if c.files != "" && !strings.Contains(out.Text, "Files changed: "+c.files+"\n") {
				t.Errorf("the result does not list %s as changed:\n%s", c.files, out.Text)
			}
			for _, w := range c.refs {
				if !strings.Contains(out.Text, w) {
					t.Errorf("the result does not say %q:\n%s", w, out.Text)
				}
			}
			for _, w := range c.absent {
				if strings.Contains(out.Text, w) {
					t.Errorf("the result says %q:\n%s", w, out.Text)
				}
			}
			// The parent's verdict keeps them, for brood tasks show.
			tk, err := dispatch.LoadTask(p.root, out.TaskID)
			must(t, err)
			if (len(c.refs) > 0) != (tk.Verdict != nil && len(tk.Verdict.Refs) > 0) {
				t.Errorf("the verdict's refs: %v, want some: %v", tk.Verdict, len(c.refs) > 0)
			}
		})
	}
}

// TestInPlaceWriterSpecialFiles (redteam19 P3-3): a FIFO an in-place
// writer leaves in the tree, which git never lists, is found by the
// parent's walks, removed, and said on the result; a FIFO of the user's
// from before stays.
func TestInPlaceWriterSpecialFiles(t *testing.T) {
	script := `
agents:
  general-purpose:
    - tools:
        - Bash: {command: 'mkfifo .mcp.json; mkfifo CLAUDE.md.fifo && mkdir -p sub && mkfifo sub/pipe && echo ok'}
    - say: "## What I did\nlooked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`
	p := newProject(t, script, nil)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	mine := filepath.Join(p.root, "mine.fifo")
	must(t, syscall.Mkfifo(mine, 0o600))
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "look"})
	must(t, err)
	for _, w := range []string{"special file(s) the subagent left in the tree", "CLAUDE.md.fifo (fifo)", "sub/pipe (fifo)"} {
		if !strings.Contains(out.Text, w) {
			t.Errorf("the result does not say %q:\n%s", w, out.Text)
		}
	}
	// .mcp.json is configuration, which the guard undoes first: said as
	// such, and never as a special file left behind.
	if strings.Contains(out.Text, "NOT removed") || strings.Contains(out.Text, `status="rejected"`) {
		t.Errorf("a special file the guard already undid is said not removed:\n%s", out.Text)
	}
	for _, f := range []string{"CLAUDE.md.fifo", "sub/pipe", ".mcp.json"} {
		if _, err := os.Lstat(filepath.Join(p.root, f)); err == nil {
			t.Errorf("%s is still in the user's tree", f)
		}
	}
	if fi, err := os.Lstat(mine); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the user's own FIFO was touched: %v %v", fi, err)
	}
}

// TestScopedWriterMovingARefIsRejected: a ref made or moved is a change
// the definition must allow: an agent whose Edit/Write rules give it only
// docs/ and that tags or commits is rejected by the scope edge (its
// default policy), the refs named.
func TestScopedWriterMovingARefIsRejected(t *testing.T) {
	agents := map[string]string{
		"docs": "---\nname: docs\ndescription: docs\ntools: Read, Bash, Edit(docs/**), Write(docs/**)\n---\nYou write docs.\n",
	}
	script := `
agents:
  docs:
    - tools:
        - Bash: {command: 'git tag v9 HEAD && echo ok'}
    - say: "## What I did\ntagged\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`
	p := newProject(t, script, agents)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "docs", Prompt: "tag"})
	must(t, err)
	for _, w := range []string{`status="rejected"`, "Refs changed: refs/tags/v9 new", "changed git refs (refs/tags/v9 new"} {
		if !strings.Contains(out.Text, w) {
			t.Errorf("the result does not say %q:\n%s", w, out.Text)
		}
	}
}
