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
	"github.com/broodhq/brood/internal/spawn"
)

// TestInPlaceLinksEveryWritableRoot (review20 L8): an in-place writer's
// link out of what it may write is removed, named and rejects the result
// wherever it may write: beside a non-git project's subdirectory
// workspace (the project root) and in an --add-dir; a link from an
// --add-dir into the work tree stays.
func TestInPlaceLinksEveryWritableRoot(t *testing.T) {
	extra := filepath.Join(t.TempDir(), "extra")
	must(t, os.MkdirAll(extra, 0o755))
	cases := []struct {
		name, cmd, link   string
		sub, addDir, gone bool
	}{
		{"beside a non-git sub workspace", "ln -s /etc/passwd ../Makefile", "Makefile", true, false, true},
		{"in an add-dir", "ln -s /etc/passwd " + extra + "/Makefile", extra + "/Makefile", false, true, true},
		{"add-dir into the tree", "ln -s ROOT/a.txt " + extra + "/intree", extra + "/intree", false, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agents := map[string]string{"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n---\nYou link.\n"}
			p := newProject(t, "", agents)
			cmd := strings.ReplaceAll(c.cmd, "ROOT", p.root)
			must(t, os.WriteFile(p.script, []byte(`
agents:
  linker:
    - tools:
        - Bash: {command: "`+cmd+`"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`), 0o644))
			ws, link := p.root, c.link
			if !filepath.IsAbs(link) {
				link = filepath.Join(p.root, link)
			}
			must(t, os.WriteFile(filepath.Join(p.root, "a.txt"), []byte("a\n"), 0o644))
			if c.sub {
				os.RemoveAll(filepath.Join(p.root, ".git"))
				ws = filepath.Join(p.root, "sub")
				must(t, os.MkdirAll(ws, 0o755))
			} else {
				git(t, p.root, "add", "-A")
				git(t, p.root, "commit", "-qm", "init")
			}
			var adds []string
			if c.addDir {
				adds = []string{extra}
			}
			exe, _ := os.Executable()
			d, err := spawn.New(spawn.Config{
				ProjectRoot: p.root, Workspace: ws, AddDirs: adds, Registry: p.registry(), Settings: p.settings(nil),
				Exe: exe, Env: p.env, Depth: 0, MaxDepth: 1, SourceAgent: "root",
				ParentSystem: "You are the root agent.", ParentModel: "script:" + p.script,
				ParentTools: []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS"},
				Permissions: dispatch.Permissions{Mode: "acceptEdits", Allow: []string{"Bash"}},
				Extras:      brood(),
			})
			must(t, err)
			out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
			must(t, err)
			_, lerr := os.Readlink(link)
			switch {
			case c.gone && lerr == nil:
				t.Errorf("%s left:\n%s", link, firstN(out.Text, 1500))
			case c.gone && (!strings.Contains(out.Text, `status="rejected"`) || !strings.Contains(out.Text, "Makefile -> /etc/passwd")):
				t.Errorf("not rejected naming the link:\n%s", firstN(out.Text, 1500))
			case !c.gone && lerr != nil:
				t.Errorf("%s removed (%v), though it leads into the tree:\n%s", link, lerr, firstN(out.Text, 1500))
			case !c.gone && !strings.Contains(out.Text, `status="done"`):
				t.Errorf("not done:\n%s", firstN(out.Text, 1500))
			}
		})
	}
}

// TestInPlaceLinkPassBlinded (review20 L9): a writer that leaves part of
// the tree unreadable to its parent's link pass (here, directories nested
// past PATH_MAX, which even root cannot open by path) when the pass before
// it saw everything is rejected (resumable), as for a link out of the
// tree, not left done with a line.
func TestInPlaceLinkPassBlinded(t *testing.T) {
	agents := map[string]string{"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n---\nYou link.\n"}
	cmd := "d=$(printf 'a%.0s' $(seq 1 200)); for i in $(seq 1 25); do mkdir $d && cd $d || exit 1; done; ln -s /etc/passwd Makefile && echo deep"
	p := newProject(t, `
agents:
  linker:
    - tools:
        - Bash: {command: "`+cmd+`"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`, agents)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
	must(t, err)
	if !strings.Contains(out.Text, `status="rejected"`) || !strings.Contains(out.Text, "could NOT be checked") {
		t.Errorf("not rejected for links it left unchecked:\n%s", firstN(out.Text, 2000))
	}
}

// TestInPlaceLinkPassBlindBefore (review22 P2-3): a part of the tree the
// link pass could not see before the writer either (here directories
// past PATH_MAX, already there) is no place for a writer to leave a link
// out of the tree unchecked: a done result whose pass after it is blind
// anywhere is rejected (resumable), with a line saying what to do.
func TestInPlaceLinkPassBlindBefore(t *testing.T) {
	agents := map[string]string{"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n---\nYou link.\n"}
	// From 20 levels down (a path the shell can still hold), a link one
	// level further: past PATH_MAX from the tree's top.
	down := "d=$(printf 'a%.0s' $(seq 1 200)); cd deep && for i in $(seq 1 20); do cd $d || exit 1; done"
	cmd := down + "; ln -s /etc/passwd $d/Makefile && echo linked"
	p := newProject(t, `
agents:
  linker:
    - tools:
        - Bash: {command: "`+cmd+`"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`, agents)
	setup := exec.Command("sh", "-c", "mkdir deep && "+strings.ReplaceAll(down, "cd $d", "mkdir $d && cd $d")+" && mkdir -p $d/$d")
	setup.Dir = p.root
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("deep tree: %v\n%s", err, out)
	}
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
	must(t, err)
	if !strings.Contains(out.Text, "linked") {
		t.Fatalf("the writer did not make its link:\n%s", firstN(out.Text, 2000))
	}
	for _, w := range []string{`status="rejected"`, "could NOT be checked after the subagent ran, nor before it", "chmod u+rx", "isolation: worktree"} {
		if !strings.Contains(out.Text, w) {
			t.Errorf("the result does not say %q:\n%s", w, firstN(out.Text, 3000))
		}
	}
}
