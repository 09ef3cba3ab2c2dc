package tasks_test

import (
	"os"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestTasksPrune deletes finished tasks older than the limit and keeps
// running ones; without --older-than it refuses.
func TestTasksPrune(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	a := p.DispatchOK("scout", "what is in the README?")
	b := p.DispatchOK("stepper", "go")
	parent := p.Start(nil, "subagent", "--background", "sleeper", "think")
	running := p.RunningTaskAmong(3)

	code, out, errOut := p.Brood("tasks", "prune")
	if code != 2 || out != "" || !strings.HasPrefix(errOut, "brood: prune needs --older-than, e.g. --older-than 168h (0s prunes every finished task)\n") {
		t.Errorf("no --older-than: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = p.Brood("tasks", "prune", "--older-than", "1h")
	if code != 0 || out != "pruned 0 dispatch(es) older than 1h0m0s\n" || len(clitest.TaskIDs(t, p.Root)) != 3 {
		t.Errorf("--older-than 1h: code %d, stdout %q, tasks %v", code, out, clitest.TaskIDs(t, p.Root))
	}
	code, out, _ = p.Brood("tasks", "prune", "--older-than", "1ns")
	if code != 0 || out != "pruned 2 dispatch(es) older than 1ns\n" {
		t.Errorf("--older-than 1ns: code %d, stdout %q", code, out)
	}
	if ids := clitest.TaskIDs(t, p.Root); len(ids) != 1 || ids[0] != running {
		t.Errorf("after prune: %v, want only the running %s (pruned %s %s)", ids, running, a, b)
	}
	code, out, _ = p.Brood("tasks", "prune", "--json", "--older-than", "1ns")
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"pruned":[]}` {
		t.Errorf("prune --json with only a running task: code %d, stdout %q", code, out)
	}

	// Stop the sleeper; once finished, it is pruned too.
	if code, _, errOut := p.Brood("tasks", "kill", running); code != 0 {
		t.Fatalf("kill: %s", errOut)
	}
	// The parent of a task stopped by `tasks kill` reports it: 130 for
	// cancelled, 5 for killed.
	if code := parent.Wait(t); code != 130 && code != 5 {
		t.Errorf("the background parent exited %d: %s", code, parent.Stderr.String())
	}
	code, out, _ = p.Brood("tasks", "prune", "--json", "--older-than", "1ns")
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"pruned":["`+running+`"]}` {
		t.Errorf("prune --json: code %d, stdout %q", code, out)
	}
	if _, err := os.Stat(dispatch.Dir(p.Root, running)); !os.IsNotExist(err) {
		t.Errorf("the pruned task's directory is still there: %v", err)
	}
}
