package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/settings"
)

// TestInPlaceLinksGitStatusDoesNotList (review20 L1, L2, L4): an in-place
// writer's link out of the tree where git status does not look (an
// ignored path, one the writer adds to .gitignore, a nested repository)
// or past the non-git walk's bound is removed, named and rejects the
// result all the same: the link pass walks the whole tree.
func TestInPlaceLinksGitStatusDoesNotList(t *testing.T) {
	cases := []struct{ name, setup, cmd, link string }{
		{"ignored dir", "ignored", "mkdir -p build && ln -s /etc/passwd build/Makefile", "build/Makefile"},
		{"gitignore added", "", "echo tools >> .gitignore && ln -s /etc/passwd tools", "tools"},
		{"non-git bound", "nogit", "mkdir a && cd a && seq 1 20001 | xargs touch && cd .. && ln -s /etc/passwd zz", "zz"},
		{"nested repo", "nested", "ln -s /etc/passwd nested/Makefile", "nested/Makefile"},
		{"nested repo new", "nested", "mkdir nested/d && ln -s /etc/passwd nested/d/Makefile", "nested/d/Makefile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agents := map[string]string{
				"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n---\nYou link.\n",
			}
			script := `
agents:
  linker:
    - tools:
        - Bash: {command: "` + c.cmd + `"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`
			p := newProject(t, script, agents)
			switch c.setup {
			case "ignored":
				os.WriteFile(filepath.Join(p.root, ".gitignore"), []byte("build/\n"), 0o644)
			case "nested":
				os.MkdirAll(filepath.Join(p.root, "nested"), 0o755)
				git(t, filepath.Join(p.root, "nested"), "init", "-q")
				os.WriteFile(filepath.Join(p.root, "nested", "a.txt"), []byte("a\n"), 0o644)
				git(t, filepath.Join(p.root, "nested"), "add", "-A")
				git(t, filepath.Join(p.root, "nested"), "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "n")
			}
			if c.setup == "nogit" {
				os.RemoveAll(filepath.Join(p.root, ".git"))
			} else {
				git(t, p.root, "add", "-A")
				git(t, p.root, "commit", "-qm", "init")
			}
			d := p.dispatcher(p.settings(func(s *settings.Settings) {}), 1, nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
			must(t, err)
			if tgt, err := os.Readlink(filepath.Join(p.root, c.link)); err == nil {
				t.Errorf("%s -> %s left in the user's tree:\n%s", c.link, tgt, firstN(out.Text, 1500))
			}
			if !strings.Contains(out.Text, `status="rejected"`) || !strings.Contains(out.Text, c.link+" -> /etc/passwd") {
				t.Errorf("the result is not rejected naming %s:\n%s", c.link, firstN(out.Text, 1500))
			}
		})
	}
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// TestInPlaceLinksUnderBroodAndGitNames (review22 P3-1): the link pass
// leaves out only the project's own .brood (and git's object fan-out
// and packs), so a writer's link out of the tree under a nested
// project's .brood records (a project there before it: a new one's
// .brood is the configuration guard's, removed whole) or in a .git
// directory that is no repository's is removed, named and rejects the
// result.
func TestInPlaceLinksUnderBroodAndGitNames(t *testing.T) {
	cases := []struct{ name, before, cmd, link string }{
		{"nested .brood", "sub/.brood/dispatch/x/result.json", "ln -s /etc/passwd sub/.brood/dispatch/Makefile", "sub/.brood/dispatch/Makefile"},
		{"no repository's .git", "", "mkdir -p x/.git && ln -s /etc/passwd x/.git/Makefile", "x/.git/Makefile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agents := map[string]string{"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n---\nYou link.\n"}
			p := newProject(t, `
agents:
  linker:
    - tools:
        - Bash: {command: "`+c.cmd+`"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`, agents)
			if c.before != "" {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(p.root, c.before)), 0o755))
				must(t, os.WriteFile(filepath.Join(p.root, c.before), []byte("{}\n"), 0o644))
			}
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			d := p.dispatcher(p.settings(nil), 1, nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
			must(t, err)
			if tgt, err := os.Readlink(filepath.Join(p.root, c.link)); err == nil {
				t.Errorf("%s -> %s left in the user's tree:\n%s", c.link, tgt, firstN(out.Text, 1500))
			}
			if !strings.Contains(out.Text, `status="rejected"`) || !strings.Contains(out.Text, c.link+" -> /etc/passwd") {
				t.Errorf("the result is not rejected naming %s:\n%s", c.link, firstN(out.Text, 1500))
			}
		})
	}
}

// TestInPlaceLinksInGitDirs (review24 P1-1): an in-place writer's link
// out of the tree in a git directory (the tree's own .git, a nested
// repository's, one it makes), where git writes its reflogs and messages
// through a link, is removed, named and rejects the result, and the
// user's next git commit there leaves the file it pointed to as it was.
func TestInPlaceLinksInGitDirs(t *testing.T) {
	cases := []struct{ name, cmd, link, commitIn string }{
		{"top logs/HEAD", "rm -f .git/logs/HEAD && ln -s VICTIM .git/logs/HEAD", ".git/logs/HEAD", "."},
		{"top COMMIT_EDITMSG", "ln -sf VICTIM .git/COMMIT_EDITMSG", ".git/COMMIT_EDITMSG", "."},
		{"nested logs/HEAD", "rm -f nested/.git/logs/HEAD && ln -s VICTIM nested/.git/logs/HEAD", "nested/.git/logs/HEAD", "nested"},
		{"new repository", "git init -q y && ln -s VICTIM y/.git/COMMIT_EDITMSG", "y/.git/COMMIT_EDITMSG", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			victim := filepath.Join(t.TempDir(), "victim")
			must(t, os.WriteFile(victim, []byte("SAFE\n"), 0o644))
			agents := map[string]string{"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n---\nYou link.\n"}
			p := newProject(t, `
agents:
  linker:
    - tools:
        - Bash: {command: "`+strings.ReplaceAll(c.cmd, "VICTIM", victim)+`"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`, agents)
			nested := filepath.Join(p.root, "nested")
			must(t, os.MkdirAll(nested, 0o755))
			git(t, nested, "init", "-q")
			must(t, os.WriteFile(filepath.Join(nested, "a.txt"), []byte("a\n"), 0o644))
			git(t, nested, "add", "-A")
			git(t, nested, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "n")
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			d := p.dispatcher(p.settings(nil), 1, nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
			must(t, err)
			if tgt, err := os.Readlink(filepath.Join(p.root, c.link)); err == nil {
				t.Errorf("%s -> %s left in the user's tree:\n%s", c.link, tgt, firstN(out.Text, 1500))
			}
			if !strings.Contains(out.Text, `status="rejected"`) || !strings.Contains(out.Text, c.link+" -> "+victim) {
				t.Errorf("the result is not rejected naming %s:\n%s", c.link, firstN(out.Text, 1500))
			}
			if c.commitIn != "" {
				git(t, filepath.Join(p.root, c.commitIn), "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "OVERWRITTEN")
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "SAFE\n" {
				t.Errorf("the file the link pointed to is now %q (%v)", b, err)
			}
		})
	}
}

// TestInPlaceReflogLinkBeforeUndoReplace (review24 P1-1): a writer that
// changes a replace ref (in packed-refs) and links its reflog to a file
// out of the tree does not get brood's own `git update-ref`, which puts
// the ref back, to append to that file: the link is removed first, named,
// and rejects the result.
func TestInPlaceReflogLinkBeforeUndoReplace(t *testing.T) {
	// Each case's writer changes the packed replace ref (brood's guard
	// puts it back with git update-ref) and leaves a link on the way to
	// that ref's reflog: the reflog file itself, or the logs directory
	// (pointed at a directory outside the tree that already holds a file
	// by the reflog's name).
	cases := []struct{ name, link, cmd string }{
		{"reflog file", ".git/logs/refs/replace/$O", `mkdir -p .git/logs/refs/replace && ln -s VICTIM .git/logs/refs/replace/$O`},
		{"logs directory", ".git/logs", `rm -rf .git/logs && ln -s VDIR .git/logs`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vdir := t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			must(t, os.WriteFile(victim, []byte("SAFE\n"), 0o644))
			inner := strings.NewReplacer("VICTIM", victim, "VDIR", vdir).Replace(tc.cmd)
			cmd := `O=$(git rev-parse HEAD:a.txt) && X=$(git rev-parse HEAD:c.txt) && sed -i 's|^[0-9a-f]* refs/replace/|'$X' refs/replace/|' .git/packed-refs` +
				` && ` + inner + ` && echo linked`
			agents := map[string]string{"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n---\nYou link.\n"}
			p := newProject(t, `
agents:
  linker:
    - tools:
        - Bash: {command: "`+cmd+`"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`, agents)
			for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
				must(t, os.WriteFile(filepath.Join(p.root, f), []byte(f+"\n"), 0o644))
			}
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			o := strings.TrimSpace(git(t, p.root, "rev-parse", "HEAD:a.txt"))
			git(t, p.root, "replace", o, strings.TrimSpace(git(t, p.root, "rev-parse", "HEAD:b.txt")))
			git(t, p.root, "pack-refs", "--all")
			outside := filepath.Join(vdir, "refs", "replace", o)
			must(t, os.MkdirAll(filepath.Dir(outside), 0o755))
			must(t, os.WriteFile(outside, []byte("SAFE\n"), 0o644))
			d := p.dispatcher(p.settings(nil), 1, nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
			must(t, err)
			link := strings.ReplaceAll(tc.link, "$O", o)
			for _, f := range []string{victim, outside} {
				if b, err := os.ReadFile(f); err != nil || string(b) != "SAFE\n" {
					t.Errorf("%s outside the tree is now %q (%v):\n%s", f, b, err, firstN(out.Text, 2500))
				}
			}
			if tgt, err := os.Readlink(filepath.Join(p.root, link)); err == nil {
				t.Errorf("%s -> %s left in the user's tree:\n%s", link, tgt, firstN(out.Text, 2500))
			}
			if !strings.Contains(out.Text, `status="rejected"`) || !strings.Contains(out.Text, link+" -> ") || !strings.Contains(out.Text, "git replace refs changed by the subagent") {
				t.Errorf("the result is not rejected naming %s and the replace ref put back:\n%s", link, firstN(out.Text, 2500))
			}
		})
	}
}
