package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
)

// TestInPlaceWriterCannotHideByIgnoring (review commithide P1-1): an
// in-place writer that makes or changes a file git ignores — one it hides
// with a new ignore file of its own (`*` in a new d/.gitignore ignores
// itself too), an ignore rule it adds to a tracked .gitignore, or one the
// project already ignored — and says it changed nothing has every such
// file named on Files changed all the same.
func TestInPlaceWriterCannotHideByIgnoring(t *testing.T) {
	cases := []struct {
		name, cmd string
		files     []string
	}{
		{name: "new self-ignoring gitignore", cmd: `mkdir -p d && echo "*" > d/.gitignore && echo evil > d/evil.go`,
			files: []string{"d/.gitignore", "d/evil.go"}},
		{name: "nested gitignore", cmd: `echo "x.go" > pkg/.gitignore && echo "package pkg // evil" > pkg/x.go`,
			files: []string{"pkg/.gitignore", "pkg/x.go"}},
		{name: "rule added to the tracked gitignore", cmd: `echo "hidden.go" >> .gitignore && echo evil > hidden.go`,
			files: []string{".gitignore", "hidden.go"}},
		{name: "ignored file changed", cmd: `echo more >> app.log`,
			files: []string{"app.log"}},
		{name: "ignored file made in a new ignored directory", cmd: `mkdir -p build/sub && echo x > build/sub/out.go`,
			files: []string{"build/sub/out.go"}},
		{name: "ignored file deleted", cmd: `rm app.log`,
			files: []string{"app.log"}},
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
			must(t, os.MkdirAll(filepath.Join(p.root, "pkg"), 0o755))
			must(t, os.WriteFile(filepath.Join(p.root, "pkg", "pkg.go"), []byte("package pkg\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(p.root, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644))
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			must(t, os.WriteFile(filepath.Join(p.root, "app.log"), []byte("mine\n"), 0o644))
			d := p.dispatcher(p.settings(nil), 1, nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "look"})
			must(t, err)
			listed := filesChangedLine(out.Text)
			for _, f := range c.files {
				if !slices.Contains(listed, f) {
					t.Errorf("Files changed %q does not name %s:\n%s", listed, f, out.Text)
				}
			}
		})
	}
}

// filesChangedLine is the names on a result's Files changed line.
func filesChangedLine(text string) []string {
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "Files changed: "); ok {
			return strings.Split(rest, ", ")
		}
	}
	return nil
}

// TestInPlaceWriterWorktreeIsReported (review commithide P3-1): a writer
// that adds a worktree of the user's repository outside the tree (git
// worktree add --detach somewhere it may write) and commits there leaves
// the tree as it was, but the repository's .git/worktrees changed: the
// configuration guard undoes the worktree's git directory and names it
// with the work tree's path.
func TestInPlaceWriterWorktreeIsReported(t *testing.T) {
	const id = "git -c user.name=e -c user.email=e@e "
	script := `
agents:
  general-purpose:
    - tools:
        - Bash: {command: 'w="$(mktemp -d)/elsewhere" && git worktree add -q --detach "$w" && cd "$w" && echo evil > x.go && git add x.go && ` + id + `commit -qm x && echo "$w"'}
    - say: "## What I did\nlooked\n## What I found\nnothing\n## Files changed\nnone\n## Problems\nnone"
`
	p := newProject(t, script, nil)
	must(t, os.WriteFile(filepath.Join(p.root, "main.go"), []byte("package main\n"), 0o644))
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "look"})
	must(t, err)
	if _, err := os.Stat(filepath.Join(p.root, ".git", "worktrees", "elsewhere")); err == nil {
		t.Errorf("the worktree's git directory is still in the repository")
	}
	if !regexp.MustCompile(`undone: \.git/worktrees/elsewhere \(its work tree "[^"]+/elsewhere"\)`).MatchString(out.Text) {
		t.Errorf("the worktree is not named with its path:\n%s", out.Text)
	}
}
