package tasks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestForgedNestedIDTakesNoRecords (review 19 N1): a child may make,
// beneath its own task directory, tasks/<id> named by another task's id
// (here a running top-level one's, with copies of its own finished
// records). The listing shows the real task once, running, never the
// forgery with the real one's owner record; and a prune removes neither
// the running task nor its owner record.
func TestForgedNestedIDTakesNoRecords(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	a := p.DispatchOK("scout", "what is in the README?")
	parent := p.Start(nil, "subagent", "--background", "sleeper", "think")
	running := p.RunningTaskAmong(2)
	defer func() { p.Brood("tasks", "kill", running); parent.Wait(t) }()

	ad := taskdir.Open(p.Root).MustTask(a)
	forged := filepath.Join(ad.Path(), taskdir.Tasks, running)
	if err := os.MkdirAll(filepath.Join(forged, taskdir.Isolate), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{taskdir.Envelope, taskdir.Result, taskdir.Log} {
		b, err := os.ReadFile(ad.File(f))
		if err != nil {
			t.Fatal(err)
		}
		clitest.WriteFile(t, filepath.Join(forged, f), strings.ReplaceAll(string(b), a, running))
	}
	rec := dispatch.OwnerPath(dispatch.OwnersDir(p.Root), running)
	if _, err := os.Stat(rec); err != nil {
		t.Fatalf("the running task's owner record %s: %v", rec, err)
	}
	n := 0
	for _, item := range p.ListJSON() {
		if item["id"] == running {
			n++
			if item["status"] != dispatch.StatusRunning || item["dir"] == forged {
				t.Errorf("the running task is listed as %v in %v", item["status"], item["dir"])
			}
		}
	}
	if n != 1 {
		t.Errorf("the running task is listed %d times", n)
	}
	code, out, errOut := p.Brood("tasks", "prune", "--json", "--older-than", "1ns")
	if code != 0 || strings.Contains(out, running) {
		t.Errorf("prune: code %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Errorf("after prune, the running task %s's owner record is gone: %v", running, err)
	}
}
