package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestIsolatedChildSnapshot: an isolated child cannot read the parent's
// gitignored .env (overlay and worktree), and when the parent edits a file
// while the child runs, the result names it as the base having moved and
// never as the child's change. The worktree copy is frozen: the child reads
// the file as it was at its start.
func TestIsolatedChildSnapshot(t *testing.T) {
	for _, mode := range []string{"overlay", "worktree"} {
		t.Run(mode, func(t *testing.T) {
			p := newProject(t, map[string]string{".gitignore": ".env\n", "c.txt": "c-original\n"})
			testbrood.WriteFile(t, filepath.Join(p.Root, ".env"), "SECRET=hunter2\n")
			if mode == "worktree" {
				writeSettings(t, p.Root, "[isolation]\nforce_worktree = true\n")
			}
			gate := filepath.Join(t.TempDir(), "go")
			script := `
agents:
  general-purpose:
    - tools: [{Bash: {command: "{ test -e .env && cat .env || echo no-env; } > saw.txt && cat c.txt >> saw.txt && ` + waitFor(gate) + `"}}]
    - say: "## What I did\nLooked.\n\n## What I found\nok\n\n## Files changed\nsaw.txt\n\n## Problems\nnone"
`
			r := start(t, p, "subagent", "general-purpose", "--isolation", "worktree", "--allow", "Bash", "--model", p.Script("s.yaml", script), "--description", "look", "Look around.")
			var id string
			r.until(t, "the child at its gate", func(ts []*dispatch.Task) bool {
				for _, tk := range ts {
					if tk.Status == dispatch.StatusRunning {
						id = tk.ID
					}
				}
				return id != "" && childWaiting(p.Root, id, mode)
			})
			testbrood.WriteFile(t, filepath.Join(p.Root, "c.txt"), "c-parent-edit\n")
			testbrood.WriteFile(t, gate, "")
			stdout, stderr := r.wait()
			saw, _ := os.ReadFile(filepath.Join(p.Root, "saw.txt"))
			if !strings.HasPrefix(string(saw), "no-env\n") {
				t.Fatalf("the child read .env or its file did not land: %q\nstdout:\n%s\nstderr:\n%s", saw, stdout, stderr)
			}
			if !strings.Contains(stdout, "Files changed: saw.txt\n") {
				t.Errorf("the parent's edit is counted as the child's\n%s", stdout)
			}
			if !strings.Contains(stdout, "Base moved: 1 file(s) of your tree changed while the child ran (your edits or another task's): c.txt;") ||
				!strings.Contains(stdout, "Its patch, taken against the tree at its start, touches none of them and applied whole.") {
				t.Errorf("the result does not say the base moved beneath the child\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			if mode == "overlay" && !strings.Contains(stdout, "it may have read the newer versions (an overlay copy follows your tree)") {
				t.Errorf("the overlay result does not say its view was not frozen\n%s", stdout)
			}
			if b, _ := os.ReadFile(filepath.Join(p.Root, "c.txt")); string(b) != "c-parent-edit\n" {
				t.Errorf("the parent's edit was lost: %q", b)
			}
			if mode == "worktree" {
				if string(saw) != "no-env\nc-original\n" {
					t.Errorf("the frozen copy followed the parent's tree: %q", saw)
				}
				if !strings.Contains(stdout, "Base moved: 1 file(s) of your tree changed while the child ran (your edits or another task's): c.txt; its copy was frozen at its start") {
					t.Errorf("the result does not say the base moved\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
				}
			}
		})
	}
}

// childWaiting reports whether the child has written saw.txt in its copy
// (it then sits at its gate): the worktree's file is visible from outside;
// an overlay's is in the child's upper layer.
func childWaiting(root, id, mode string) bool {
	f := filepath.Join(root, ".git", "brood-worktrees", id, "saw.txt")
	if mode == "overlay" {
		f = filepath.Join(dispatch.Dir(root, id), "isolate", "upper", "saw.txt")
	}
	b, err := os.ReadFile(f)
	return err == nil && strings.Count(string(b), "\n") == 2
}

// TestInPlaceWriterTakesItsParentsSnapshot: an in-place writer's parent
// hands the tree as it found it (a file already dirty) down to the child,
// which measures its own account from it instead of walking the tree a
// second time: it walks it not at all, and leaves the account of what it
// changed (only its own change) to its parent's two walks.
func TestInPlaceWriterTakesItsParentsSnapshot(t *testing.T) {
	p := newProject(t, map[string]string{"c.txt": "c\n"})
	testbrood.WriteFile(t, filepath.Join(p.Root, "pre.txt"), "dirty before the child\n")
	script := `
agents:
  general-purpose:
    - tools: [{Bash: {command: "echo made > made.txt"}}]
    - say: "## What I did\nWrote.\n\n## What I found\nok\n\n## Files changed\nmade.txt\n\n## Problems\nnone"
`
	code, stdout, stderr := p.Brood(t.Context(), nil, "subagent", "general-purpose", "--isolation", "none", "--allow", "Bash",
		"--model", p.Script("s.yaml", script), "Make a file.")
	if code != 0 || !strings.Contains(stdout, `status="done"`) || !strings.Contains(stdout, "Files changed: made.txt\n") {
		t.Fatalf("the in-place writer: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	tasks, err := dispatch.ListTasks(p.Root)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %v %v", tasks, err)
	}
	var before dispatch.TreeState
	if err := tasks[0].Files().ReadJSON(dispatch.TreeBeforeFile, &before); err != nil {
		t.Fatalf("no tree-before.json for the in-place writer: %v", err)
	}
	_, pre := before.Files["pre.txt"]
	if _, made := before.Files["made.txt"]; !pre || made {
		t.Errorf("tree-before.json = %v, want the tree with pre.txt dirty and made.txt not yet made", before.Files)
	}
	if r := tasks[0].Result; r == nil || strings.Join(r.FilesChanged, ",") != "made.txt" {
		t.Errorf("the task's account: %+v, want made.txt only", r)
	}
	// The child walked the tree neither before nor after its work: its
	// account is its parent's two walks, recorded in the verdict.
	var claim struct {
		Files *[]string `json:"files_changed"`
	}
	if err := tasks[0].Files().ReadJSON(dispatch.ResultFile, &claim); err != nil || claim.Files != nil {
		t.Errorf("the child's result.json claims files of its own: %v (%v)", claim.Files, err)
	}
	if v := tasks[0].Verdict; v == nil || strings.Join(v.FilesChanged, ",") != "made.txt" {
		t.Errorf("the verdict: %+v, want the parent's account made.txt", v)
	}
}
