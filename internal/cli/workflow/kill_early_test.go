package workflow_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestKill9AsSoonAsCallsStart kills the run the moment its journal shows a
// call starting — children may be spawning, running or just done, their
// ends not journaled yet — and resumes it: every call ends once, under the
// task id it was journaled with, and what the journal saw finish is kept.
func TestKill9AsSoonAsCallsStart(t *testing.T) {
	p := newProject(t, resumeScript)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plan := "name: quick\nconcurrency: 2\nphases:\n  - id: p\n    parallel:\n" + strings.Repeat("      - {agent: explore, prompt: \"quick\"}\n", 4)
	cmd := exec.Command(exe, "workflow", "run", "--yes", p.plan("quick.yaml", plan))
	cmd.Dir, cmd.Env = p.Root, p.Env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	waitFor(t, "a call to start", func() bool {
		if dir = runDir(p); dir == "" {
			return false
		}
		lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
		started, _, _, _ := wf.Summary(lines)
		return started >= 1
	})
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
	started, finished := map[string]string{}, map[string]bool{}
	for _, l := range lines {
		switch l.Type {
		case "start":
			started[l.Key] = l.TaskID
		case "done":
			finished[l.Key] = true
		}
	}
	for _, id := range started {
		waitFor(t, "orphaned children to end", func() bool {
			tk, err := dispatch.LoadTask(p.Root, id)
			return err != nil || (tk.Status != dispatch.StatusRunning && tk.Status != dispatch.StatusQueued)
		})
	}
	runs := list(t, p)
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "resume", runs[0].RunID, "--json")
	var res wf.Result
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	outs, _ := res.Outputs["p"].([]any)
	for i, o := range outs {
		if o != "done quickly" && o != "picked up again and finished" {
			t.Errorf("output %d after resume: %v", i, o)
		}
	}
	if len(outs) != 4 || res.Status != wf.RunDone {
		t.Fatalf("status %s outputs %s", res.Status, js(outs))
	}
	for _, c := range phase(t, &res, "p").Calls {
		if id, ok := started[c.Key]; ok && c.TaskID != id {
			t.Errorf("%s was journaled as task %s and ended as %s: re-created", c.Key, id, c.TaskID)
		}
		if finished[c.Key] && exists(filepath.Join(dispatch.Dir(p.Root, c.TaskID), "result.0.json")) {
			t.Errorf("%s had finished before the kill and ran again", c.Key)
		}
	}
	ents, _ := os.ReadDir(dispatch.Root(p.Root))
	if n := countTasks(ents); n != 4 {
		t.Errorf("%d task directories, want 4", n)
	}
}
