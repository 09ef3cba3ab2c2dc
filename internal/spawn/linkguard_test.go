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

// TestWriterLinksOutOfTree (review18 R3): a writer that leaves symbolic
// links pointing outside the tree (into its task directory, to an absolute
// path) gets none of them into the user's tree. In place they are removed
// and the result is rejected; isolated, its patch is kept whole and not
// applied (patch="not-applied", as a conflicting landing). Either way the
// links are named on the result, and a link within the tree is fine.
func TestWriterLinksOutOfTree(t *testing.T) {
	cases := []struct {
		name, isolation string
		force           bool
		want            []string
	}{
		{"in place", "", false, []string{`status="rejected"`, "Configuration: symbolic link(s) the subagent left pointing outside the tree, removed: ", "Files changed: "}},
		{"overlay", "isolation: worktree\n", false, []string{`status="done" patch="not-applied"`, "Configuration: symbolic link(s) pointing outside the tree NOT landed", "NOT applied"}},
		{"worktree", "isolation: worktree\n", true, []string{`status="done" patch="not-applied"`, "Configuration: symbolic link(s) pointing outside the tree NOT landed", "NOT applied"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agents := map[string]string{
				"linker": "---\nname: linker\ndescription: links\ntools: Read, Bash\n" + c.isolation + "---\nYou link.\n",
			}
			script := `
agents:
  linker:
    - tools:
        - Bash: {command: "ln -s ../.brood/dispatch/evil tools && ln -s /etc/passwd Makefile && ln -s README.md readme && echo ok > ok.txt"}
    - say: "## What I did\nlinked\n## What I found\nnothing\n## Files changed\ntools, Makefile, readme, ok.txt\n## Problems\nnone"
`
			p := newProject(t, script, agents)
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			d := p.dispatcher(p.settings(func(s *settings.Settings) { s.Isolation.ForceWorktree = c.force }), 1, nil)
			out, err := d.Call(context.Background(), call.Spec{Agent: "linker", Prompt: "link"})
			must(t, err)
			for _, w := range c.want {
				if !strings.Contains(out.Text, w) {
					t.Errorf("the result does not say %q:\n%s", w, out.Text)
				}
			}
			for _, l := range []string{"tools", "Makefile"} {
				if !strings.Contains(out.Text, l+" -> ") {
					t.Errorf("the result does not name %s and its target:\n%s", l, out.Text)
				}
				if _, err := os.Lstat(filepath.Join(p.root, l)); err == nil {
					t.Errorf("%s is in the user's tree", l)
				}
			}
			if c.isolation == "" {
				if tgt, err := os.Readlink(filepath.Join(p.root, "readme")); err != nil || tgt != "README.md" {
					t.Errorf("a link within the tree was undone: %q %v", tgt, err)
				}
			}
		})
	}
}
