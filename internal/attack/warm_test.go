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

// TestWarmSlotTamperedIsNotUsed: something that writes .brood/dispatch
// (an in-place writer where the kernel cannot cover the other tasks'
// directories from it; here the root's own Bash, after a writer ran)
// plants a file in the directory of an idle warm child (pool.warm), which
// exists before its task does. The explore dispatched next does not take
// that warm child: it starts cold in a directory of its own, which holds
// nothing planted there, and the tampered slot is removed.
func TestWarmSlotTamperedIsNotUsed(t *testing.T) {
	p := newProject(t, nil)
	mdl := p.script("warm.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "write", prompt: "write"}
    - tools:
        - Bash:
            command: 'n=0; for d in .brood/dispatch/*/; do [ -e "$d/envelope.json" ] || { echo FORGED > "$d/planted"; n=$((n+1)); }; done; echo planted $n'
    - tools:
        - Task: {subagent_type: explore, description: "look", prompt: "look"}
    - say: "{{result 0}}"
  general-purpose:
    - say: "## What I did\nWrote.\n\n## What I found\nnothing\n\n## Files changed\nnone\n\n## Problems\nnone"
  explore:
    - say: "## What I did\nLooked.\n\n## What I found\nnothing\n\n## Files changed\nnone\n\n## Problems\nnone"
`)
	code, out, errs := p.brood(t.Context(), []string{"BROOD_WARM=1"}, "run", "--model", mdl, "--allow", "Bash", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	planted := false
	for _, r := range p.rootTranscript() {
		planted = planted || (r.Type == session.RecToolResult && r.Tool == "Bash" && strings.Contains(r.Output, "planted 1"))
	}
	tasks, _ := dispatch.ListTasks(p.root)
	if !planted {
		t.Fatalf("the scenario needs the writer to have planted into one idle warm child's directory:\n%s\n%s", out, errs)
	}
	ids, _ := taskdir.Open(p.root).TaskIDs()
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(dispatch.Dir(p.root, id), "planted")); err == nil {
			tk, _ := dispatch.LoadTask(p.root, id)
			t.Errorf("task directory %s holds the writer's planted file (task %+v)", id, tk)
		}
	}
	done := 0
	for _, tk := range tasks {
		if tk.Agent == "explore" && tk.Status == dispatch.StatusDone {
			done++
		}
	}
	if len(tasks) != 2 || done != 1 {
		t.Errorf("want the writer and one explore done, have %d tasks (%d explores done)", len(tasks), done)
	}
}
