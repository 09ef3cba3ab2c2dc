package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestDelegatingChildReachesNoSibling (review 18 S1): a child that may
// delegate (Task allowed, below the depth cap) of every class reads
// neither a sibling's result nor its transcript and cannot overwrite the
// sibling's result.json, nor write anything else beneath .brood/dispatch
// but its own task directory; and it still delegates: its own child's
// directory is made nested in its own, and the root lists it. Before,
// such a child had .brood/dispatch writable whole.
func TestDelegatingChildReachesNoSibling(t *testing.T) {
	needLandlock(t)
	classes := []struct {
		name, agent string
		env         []string
	}{
		{"read-only", "rodel", nil},
		{"in-place writer", "general-purpose", nil},
		{"isolated writer (overlay where it mounts)", "isodel", nil},
		{"isolated writer (git worktree)", "isodel", []string{"BROOD_FORCE_WORKTREE=1"}},
	}
	for _, c := range classes {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			cfg := filepath.Join(p.home, ".config", "brood")
			writeFile(t, filepath.Join(cfg, "settings.toml"), "maxSubagentDepth = 2\n")
			writeFile(t, filepath.Join(cfg, "agents", "rodel.md"),
				"---\nname: rodel\ndescription: read-only delegator\ntools: Read, Bash, Task\ndelegate: explore\nsandbox: read-only\n---\nLook.\n")
			writeFile(t, filepath.Join(cfg, "agents", "isodel.md"),
				"---\nname: isodel\ndescription: isolated delegator\ntools: Bash, Task\ndelegate: explore\nisolation: worktree\n---\nWrite.\n")
			sib := taskdir.Open(p.root).MustTask(taskdir.NewID())
			if err := sib.Create(); err != nil {
				t.Fatal(err)
			}
			const sibResult = `{"task_id":"x","status":"done","summary":"SIBLING-RESULT-SECRET-4"}` + "\n"
			writeFile(t, sib.File(taskdir.Result), sibResult)
			writeFile(t, sib.File(taskdir.Session), `{"text":"SIBLING-TRANSCRIPT-SECRET-5"}`+"\n")
			disp := filepath.Dir(sib.Path())
			probe := "cat '" + sib.File(taskdir.Result) + "' '" + sib.File(taskdir.Session) + "' 2>/dev/null | grep -o 'SECRET-[0-9]*' | sort -u | tr '\\n' ' '; " +
				"(echo FORGED > '" + sib.File(taskdir.Result) + "') 2>/dev/null && echo SIBLING-WRITTEN; " +
				"mkdir '" + filepath.Join(disp, taskdir.NewID()) + "' 2>/dev/null && echo DISPATCH-WRITTEN; " +
				"test -r \"$TMPDIR/../envelope.json\" && echo OWN-READ; echo probed"
			mdl := p.script("probe.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "`+strings.NewReplacer(`\\`, `\\\\`, `"`, `\"`).Replace(probe)+`"}
        - Task: {subagent_type: explore, description: grand, prompt: "look"}
    - say: "PROBE {{result 0}} GRAND {{result 1}}"
  explore:
    - say: "grandchild done"
`)
			code, out, errs := p.brood(t.Context(), c.env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			var res string
			for _, r := range p.rootTranscript() {
				if r.Type == session.RecToolResult && r.Tool == "Task" {
					res = r.Output
				}
			}
			if !strings.Contains(res, "probed") || !strings.Contains(res, "OWN-READ") {
				t.Fatalf("the %s child's probe did not run or cannot read its own directory:\n%s\n%s", c.name, res, errs)
			}
			if !strings.Contains(res, "grandchild done") {
				t.Fatalf("%s: the child did not delegate:\n%s\n%s", c.name, res, errs)
			}
			for _, bad := range []string{"SECRET-", "SIBLING-WRITTEN", "DISPATCH-WRITTEN"} {
				if strings.Contains(res, bad) {
					t.Errorf("%s: the delegating child reached another task (%s):\n%s", c.name, bad, res)
				}
			}
			if b, err := os.ReadFile(sib.File(taskdir.Result)); err != nil || string(b) != sibResult {
				t.Errorf("%s: the sibling's result.json is now %q (%v)", c.name, b, err)
			}
			tasks, err := dispatch.ListTasks(p.root)
			if err != nil {
				t.Fatal(err)
			}
			nested := 0
			for _, tk := range tasks {
				if tk.Files().Nested() && tk.Agent == "explore" && tk.Status == dispatch.StatusDone {
					nested++
				}
			}
			if nested != 1 {
				t.Errorf("%s: %d finished nested explore tasks listed, want 1", c.name, nested)
			}
		})
	}
}
