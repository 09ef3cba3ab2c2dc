package workflow_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestAWriterCancelledWhileRunningSaysSo (issue 26, P3): Ctrl-C while an
// isolated writer has edited its copy. The writer ran: it is cancelled,
// its record says it was cancelled while it ran and that what it changed
// so far did not land (kept with its task), never that it conflicted; its
// phase says a call was cancelled while it ran, not that it did not run.
func TestAWriterCancelledWhileRunningSaysSo(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	p := newProject(t, `
agents:
  general-purpose:
    - tools: [{Edit: {file_path: "README.md", old_string: "# Sample", new_string: "# Title A"}}, {Bash: {command: "`+waitGate(gate)+`"}}]
    - say: "Retitled README.md."
`)
	p.allow(`"Edit", "Bash"`)
	plan := p.plan("cancel.yaml", `
name: cancel
phases:
  - id: write
    parallel:
      - {id: a, agent: general-purpose, isolation: worktree, prompt: "title A"}
`)
	r := p.start("workflow", "run", "--yes", "--json", plan)
	waitFor(t, "the writer to edit its copy", func() bool { return editedCopies(p.Root, "# Title A") == 1 })
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := r.wait()
	testbrood.WriteFile(t, gate, "") // the child is gone; nothing waits on it
	var res wf.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != wf.RunCancelled {
		t.Fatalf("exit %d, status %s: %v\n%s\n%s", code, res.Status, err, out, stderr)
	}
	write := phase(t, &res, "write")
	a := write.Calls[0]
	if a.Status != wf.CallCancelled || a.TaskID == "" || !strings.Contains(a.Error, "cancelled while it ran") ||
		!strings.Contains(a.Error, "did not land in the tree") || !strings.Contains(a.Error, "kept with task "+a.TaskID) || strings.Contains(a.Error, "conflict") {
		t.Errorf("the cancelled writer: %s (%q); want cancelled, saying it ran and what became of its change", a.Status, a.Error)
	}
	if !strings.Contains(write.Reason, "1 of 1 calls were cancelled while they ran") || strings.Contains(write.Reason, "did not run") {
		t.Errorf("phase write: %s (%s); want it to say a call was cancelled while it ran", write.Status, write.Reason)
	}
	if b, _ := os.ReadFile(filepath.Join(p.Root, "README.md")); string(b) != "# Sample\n" {
		t.Errorf("README.md %q: the cancelled writer's change landed", b)
	}
}
