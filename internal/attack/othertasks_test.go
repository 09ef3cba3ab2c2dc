package attack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestOtherTasksUnreadableWhateverTheirNumber (issue 29, spawn cost; review
// 15 C7): in a project with 2,000 finished tasks, a child of every class
// starts, reads its own task directory and no other task's result. Each
// other task was once a path of its own in the child's hidden list: past
// some 1,400 of them the list no longer fit in the one environment entry
// a child started in a user namespace is given it by (read-only, in-place,
// overlay: "argument list too long"), and none started. And a writer whose
// tree holds .brood/dispatch read every other task there through its
// tree's rule whatever the list said: its mount namespace covers them.
func TestOtherTasksUnreadableWhateverTheirNumber(t *testing.T) {
	needLandlock(t)
	for _, c := range childClasses {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			proj := taskdir.Open(p.root)
			for i := range 2000 {
				td := proj.MustTask(taskdir.NewID())
				if err := td.Create(); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(td.File(taskdir.Result), []byte(fmt.Sprintf("{\"text\":\"OTHER-TASK-%d\"}\n", i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			mdl := p.script("probe.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+c.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+c.agent+`:
    - tools:
        - Bash: {command: "cat .brood/dispatch/*/result.json 2>/dev/null | grep -c OTHER-TASK; test -r \"$TMPDIR/../envelope.json\" && echo OWN-READ; echo probed"}
    - say: "PROBE {{result 0}}"
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
			if !strings.Contains(res, "probed") {
				t.Fatalf("the %s child's probe did not run:\n%s\n%s", c.name, res, errs)
			}
			if !strings.Contains(res, "OWN-READ") {
				t.Errorf("%s: the child cannot read its own task directory:\n%s", c.name, res)
			}
			if !strings.Contains(res, "PROBE 0\n") {
				t.Errorf("%s: the child read other tasks' results:\n%s", c.name, res)
			}
		})
	}
}
