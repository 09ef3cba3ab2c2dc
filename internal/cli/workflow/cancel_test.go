package workflow_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestCancelFromAnotherProcess: `brood workflow cancel` stops a run that
// another process is running; that process exits 130, the run shows as
// cancelled, and a resume finishes it without running the finished calls
// again.
func TestCancelFromAnotherProcess(t *testing.T) {
	p := newProject(t, resumeScript)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "workflow", "run", "--yes", p.plan("durable.yaml", resumePlan))
	cmd.Dir, cmd.Env = p.Root, p.Env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	waitFor(t, "three calls done and the slow one started", func() bool {
		if dir = runDir(p); dir == "" {
			return false
		}
		lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
		started, done, _, _ := wf.Summary(lines)
		return started == 4 && done == 3
	})
	id := filepath.Base(dir)
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "cancel", id)
	if code != 0 || !strings.Contains(out, "resumable") {
		t.Fatalf("cancel: exit %d\n%s\n%s", code, out, errs)
	}
	err = cmd.Wait()
	if cmd.ProcessState.ExitCode() != 130 {
		t.Fatalf("the running process exited %d (%v), want 130", cmd.ProcessState.ExitCode(), err)
	}
	if runs := list(t, p); runs[0].Status != wf.RunCancelled {
		t.Fatalf("list shows %s, want cancelled", runs[0].Status)
	}
	code, out, errs = p.Brood(context.Background(), nil, "workflow", "resume", id, "--json")
	var res wf.Result
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Agents != 4 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	if got := js(res.Outputs["p"]); got != `["done quickly","done quickly","done quickly","picked up again and finished"]` {
		t.Fatalf("outputs after resume: %s", got)
	}
	code, _, errs = p.Brood(context.Background(), nil, "workflow", "cancel", id)
	if code == 0 || !strings.Contains(errs, "not running") {
		t.Fatalf("cancelling a finished run: exit %d\n%s", code, errs)
	}
}
