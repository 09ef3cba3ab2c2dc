package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorktreeCopyWriterCommits: a writer in a git worktree copy runs git
// add, mv, commit and reset there, changes a file after its commit too, and the
// parent lands the whole of it as one patch (its landing trusts nothing of
// the copy's index: a file marked assume-unchanged there lands); the same writer's attempts to
// write, replace or remove its copy's commondir, gitdir and config.worktree,
// the common dir's config, hooks and info, and a branch of the user's are
// all refused.
func TestWorktreeCopyWriterCommits(t *testing.T) {
	p := newProject(t, map[string]string{"c.txt": "c-original\n", "keep.txt": "keep\n"})
	writeSettings(t, p.Root, "[isolation]\nforce_worktree = true\n")
	config, _ := os.ReadFile(filepath.Join(p.Root, ".git", "config"))
	commit := `set -e
echo c-child > c.txt
git mv c.txt d.txt
echo e > e.txt
git add e.txt
git -c user.name=child -c user.email=child@example.com commit -q -m child
git reset -q --soft HEAD~1
git -c user.name=child -c user.email=child@example.com commit -q -m again
test "$(git rev-list --count HEAD)" = 2
echo after-commit >> d.txt
git update-index --assume-unchanged keep.txt
echo keep-child > keep.txt
git status --porcelain > status.txt
echo committed > committed.txt
`
	attempts := `GD=$(git rev-parse --absolute-git-dir)
CD=$(git rev-parse --path-format=absolute --git-common-dir)
for f in "$GD/commondir" "$GD/gitdir" "$GD/config.worktree" "$CD/config" "$CD/hooks/pre-commit" "$CD/info/exclude" "$CD/refs/heads/child"; do
  { echo x >> "$f"; } 2>/dev/null && echo "append $f" >> wrote.txt
  { printf x > "$GD/t.tmp" && mv -f "$GD/t.tmp" "$f"; } 2>/dev/null && echo "replace $f" >> wrote.txt
  { test -e "$f" && rm -f "$f" && ! test -e "$f"; } 2>/dev/null && echo "remove $f" >> wrote.txt
done
rm -f "$GD/t.tmp"
git branch child 2>/dev/null && echo "branch" >> wrote.txt
git stash -q 2>/dev/null && echo "stash" >> wrote.txt
git tag child 2>/dev/null && echo "tag" >> wrote.txt
echo tried > tried.txt
`
	script := `
agents:
  general-purpose:
    - tools:
        - Bash:
            command: |
` + indent(commit, "              ") + `
    - tools:
        - Bash:
            command: |
` + indent(attempts, "              ") + `
    - say: "## What I did\nCommitted.\n\n## What I found\nok\n\n## Files changed\nd.txt e.txt keep.txt\n\n## Problems\nnone"
`
	_, stdout, stderr := p.Brood(t.Context(), nil, "subagent", "general-purpose", "--isolation", "worktree", "--allow", "Bash",
		"--model", p.Script("s.yaml", script), "--description", "commit", "Commit.")
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(p.Root, name))
		return string(b)
	}
	if read("committed.txt") != "committed\n" || read("d.txt") != "c-child\nafter-commit\n" || read("e.txt") != "e\n" {
		t.Fatalf("the committed change did not land: committed.txt %q, d.txt %q, e.txt %q\nstdout:\n%s\nstderr:\n%s",
			read("committed.txt"), read("d.txt"), read("e.txt"), stdout, stderr)
	}
	if got := read("keep.txt"); got != "keep-child\n" {
		t.Errorf("keep.txt, changed behind its copy's index (assume-unchanged), did not land: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(p.Root, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("c.txt, moved by git mv in the copy, is still in the tree (%v)", err)
	}
	if got := read("status.txt"); got != " M d.txt\n?? status.txt\n" {
		t.Errorf("git status in the copy after the commit = %q, want the one change made after it", got)
	}
	if read("tried.txt") != "tried\n" {
		t.Fatalf("the attempts did not run\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if w := read("wrote.txt"); w != "" {
		t.Errorf("the worktree writer wrote what it may not:\n%s", w)
	}
	if now, _ := os.ReadFile(filepath.Join(p.Root, ".git", "config")); string(now) != string(config) {
		t.Errorf(".git/config changed:\n%s", now)
	}
	for _, f := range []string{"hooks/pre-commit", "refs/heads/child", "refs/tags/child", "refs/stash"} {
		if _, err := os.Lstat(filepath.Join(p.Root, ".git", f)); !os.IsNotExist(err) {
			t.Errorf(".git/%s exists (%v)", f, err)
		}
	}
	if out := p.Git("status", "--porcelain"); !strings.Contains(out, "D  c.txt") && !strings.Contains(out, " D c.txt") {
		t.Logf("status after landing:\n%s", out)
	}
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}
