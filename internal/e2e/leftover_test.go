package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestLeftoverCopies: a worktree child whose patch conflicts keeps its copy;
// brood tasks says so and how to apply or drop it; prune keeps it while its
// work is not in the tree, removes it (worktree entry included) once the
// user applied the patch, and --force drops one that still holds work.
func TestLeftoverCopies(t *testing.T) {
	for _, how := range []string{"applied-by-hand", "force"} {
		t.Run(how, func(t *testing.T) {
			p := newProject(t, map[string]string{"c.txt": "c-original\n"})
			writeSettings(t, p.Root, "[isolation]\nforce_worktree = true\n")
			gate := filepath.Join(t.TempDir(), "go")
			script := `
agents:
  general-purpose:
    - tools: [{Bash: {command: "echo c-child > c.txt && ` + waitFor(gate) + `"}}]
    - say: "## What I did\nEdited.\n\n## What I found\nok\n\n## Files changed\nc.txt\n\n## Problems\nnone"
`
			r := start(t, p, "subagent", "general-purpose", "--isolation", "worktree", "--allow", "Bash", "--model", p.Script("s.yaml", script), "--description", "edit", "Edit c.")
			var id string
			r.until(t, "the child at its gate", func(ts []*dispatch.Task) bool {
				for _, tk := range ts {
					if tk.Status == dispatch.StatusRunning {
						id = tk.ID
					}
				}
				b, _ := os.ReadFile(filepath.Join(p.Root, ".git", "brood-worktrees", id, "c.txt"))
				return id != "" && string(b) == "c-child\n"
			})
			testbrood.WriteFile(t, filepath.Join(p.Root, "c.txt"), "c-parent\n")
			testbrood.WriteFile(t, gate, "")
			stdout, stderr := r.wait()
			if !strings.Contains(stdout, `patch="not-applied"`) {
				t.Fatalf("the patch should conflict\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			wt := filepath.Join(p.Root, ".git", "brood-worktrees", id)
			_, list, _ := p.Brood(t.Context(), nil, "tasks")
			_, show, _ := p.Brood(t.Context(), nil, "tasks", "show", id)
			if !strings.Contains(list, "[unapplied copy kept") || !strings.Contains(show, "copy     "+wt+" (worktree) holds work never applied. Apply it with: git apply ") {
				t.Fatalf("brood tasks does not tell of the kept copy\nlist:\n%s\nshow:\n%s", list, show)
			}
			_, out, _ := p.Brood(t.Context(), nil, "tasks", "prune", "--older-than", "0s")
			if _, err := os.Stat(wt); err != nil || !strings.Contains(out, "kept "+id+"'s copy at "+wt) {
				t.Fatalf("prune removed a copy holding unapplied work (%v)\n%s", err, out)
			}
			args := []string{"tasks", "prune", "--older-than", "0s", "--force"}
			if how == "applied-by-hand" {
				patch := regexp.MustCompile(`Apply it with: git apply (\S+)`).FindStringSubmatch(show)[1]
				testbrood.WriteFile(t, filepath.Join(p.Root, "c.txt"), "c-original\n")
				p.Git("apply", patch)
				args = args[:4]
			}
			_, out, errOut := p.Brood(t.Context(), nil, args...)
			if _, err := os.Stat(wt); !os.IsNotExist(err) {
				t.Fatalf("%v left the copy %s (%v)\n%s\n%s", args, wt, err, out, errOut)
			}
			if wl := p.Git("worktree", "list"); strings.Contains(wl, "brood-worktrees") {
				t.Errorf("git still lists the worktree:\n%s", wl)
			}
			if how == "applied-by-hand" && !strings.Contains(out, "pruned 1 dispatch(es)") {
				t.Errorf("the task's records should go with its clean copy:\n%s", out)
			}
		})
	}
}
