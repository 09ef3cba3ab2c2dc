package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestTasksOutputFinished: a finished task's status and wrapped result, as
// text and JSON; an unknown id is a clear error.
func TestTasksOutputFinished(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("stepper", "go")
	code, out, errOut := p.Brood("tasks", "output", id)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, w := range []string{"status: partial\n<subagent-result task-id=\"" + id + "\" agent=\"stepper\" status=\"partial\" trust=\"untrusted\"", "\nstep one\n</subagent-result>\n", "Continue it with: brood tasks resume " + id + " \"...\""} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	code, out, _ = p.Brood("tasks", "output", "--json", id)
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v) != 3 || v["task_id"] != id || v["status"] != "partial" || !strings.HasPrefix(v["output"], "<subagent-result task-id=\""+id+"\"") {
		t.Errorf("--json: code %d\n%s", code, out)
	}
	// --wait on a finished task returns at once.
	code, out, _ = p.Brood("tasks", "output", "--wait", id)
	if code != 0 || !strings.HasPrefix(out, "status: partial\n") {
		t.Errorf("--wait on a finished task: code %d\n%s", code, out)
	}
	code, out, errOut = p.Brood("tasks", "output", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	// It may be a fleet task: the line says which verbs take one.
	if !strings.Contains(errOut, "a fleet task is not kept here: brood tasks show 01ARZ3NDEKTSV4RRFFQ69G5FAV prints it") {
		t.Errorf("unknown id: stderr %q; want the verbs that take a fleet task named", errOut)
	}
}

// TestTasksOutputWait: for a running task (a slow child of another process)
// output says so at once, and with --wait it waits until the task is done.
func TestTasksOutputWait(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	parent := p.Start(nil, "subagent", "--background", "slow", "take your time")
	id := p.RunningTask()
	// The parent names the task before it finishes.
	clitest.WaitFor(t, "the parent to name the task", func() bool { return strings.Contains(parent.Stdout.String(), "task "+id+" ") })

	// The child's only turn takes 3s: these run well inside it.
	code, out, errOut := p.Brood("tasks", "output", id)
	if want := "status: running\ntask " + id + " is still running: wait for it with brood tasks output " + id + " --wait"; code != 0 || strings.Contains(out, "TaskOutput") || !strings.HasPrefix(out, want) {
		t.Errorf("output of a running task: code %d, stdout %q (want %q...), stderr %q", code, out, want, errOut)
	}
	code, out, _ = p.Brood("tasks", "output", "--json", "--wait", "--timeout", "50ms", id)
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["status"] != "running" || v["task_id"] != id {
		t.Errorf("--wait --timeout 50ms: code %d, stdout %q", code, out)
	}

	code, out, errOut = p.Brood("tasks", "output", "--wait", id)
	if code != 0 || !strings.HasPrefix(out, "status: done\n<subagent-result task-id=\""+id+"\" agent=\"slow\" status=\"done\" trust=\"untrusted\"") || !strings.Contains(out, "\nslow and steady: finished\n</subagent-result>\n") {
		t.Errorf("--wait: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code := parent.Wait(t); code != 0 {
		t.Errorf("the parent exited %d; stderr:\n%s", code, parent.Stderr.String())
	}
	if !strings.Contains(parent.Stderr.String(), "task "+id+" finished") {
		t.Errorf("the background parent's stderr:\n%s", parent.Stderr.String())
	}
}

// TestUnknownIDSaysWhatIsTrueHere: an unknown id's hint is true of the
// project it was looked up in: one with tasks points at brood tasks
// --all; one without says it has none (--all would list nothing).
func TestUnknownIDSaysWhatIsTrueHere(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tasks bool
		want  string
	}{
		{"a project with tasks", true, "(brood tasks --all lists this project's)"},
		{"a project without", false, "(this project has no tasks)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewDispatchProject(t, true)
			if tc.tasks {
				p.DispatchOK("stepper", "go")
			}
			code, _, errOut := p.Brood("tasks", "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
			if code != 1 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "lists them") {
				t.Errorf("code %d, stderr %q; want %q", code, errOut, tc.want)
			}
		})
	}
}
