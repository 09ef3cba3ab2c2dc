package tasks_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestTasksKill stops a running child that another brood process started in
// the background: its process is gone, it is listed as cancelled with its
// resume handle, and it resumes. Killing a finished task or an unknown id is
// a clear error, and so is resuming a running one.
func TestTasksKill(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	parent := p.Start(nil, "subagent", "--background", "sleeper", "think")
	id := p.RunningTask()
	// Wait until the child is in its first (hour-long) model call: past its
	// start-up, it winds down on SIGTERM and records that it was stopped.
	p.WaitTranscript(id, "the child's first turn", func(r session.Record) bool { return r.Type == session.RecMessage })
	var lg dispatch.Log
	clitest.ReadRecord(t, p.Root, id, dispatch.LogFile, &lg)
	if lg.PID <= 0 || !dispatch.Alive(lg.PID, id) {
		t.Fatalf("dispatch log of the running task: %+v", lg)
	}

	code, out, errOut := p.Brood("tasks", "resume", id, "wake up")
	if code != 1 || out != "" || errOut != "brood: task "+id+" (sleeper) is still running: wait for it with TaskOutput or steer it with SendMessage (from a shell: brood tasks output "+id+" --wait, brood tasks send "+id+" \"...\")\n" {
		t.Errorf("resume of a running task: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = p.Brood("tasks", "show", id)
	if code != 0 || !strings.Contains(out, "status   running\n") || !strings.Contains(out, "\nno result yet\n") {
		t.Errorf("show of a running task: code %d\n%s", code, out)
	}

	code, out, errOut = p.Brood("tasks", "kill", id)
	want := "stopped task " + id + " (pid " + clitest.JSONNumber(lg.PID) + "); resume it with: brood tasks resume " + id + " \"...\"\n"
	if code != 0 || out != want {
		t.Fatalf("kill: code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}
	if dispatch.Alive(lg.PID, id) {
		t.Errorf("the child (pid %d) is still alive after kill returned", lg.PID)
	}
	list := p.ListJSON()
	if len(list) != 1 {
		t.Fatalf("tasks: %v", list)
	}
	res, _ := list[0]["result"].(map[string]any)
	if st := list[0]["status"]; (st != "cancelled" && st != "killed") || res["resume_handle"] != id {
		t.Errorf("after kill: status %v, result %v", st, res)
	}
	// show's result block is under the task's status, the parent's
	// account (killed), not the child's own word (cancelled).
	if _, show, _ := p.Brood("tasks", "show", id); !strings.Contains(show, "\nresult ("+list[0]["status"].(string)+"):\n") || strings.Contains(show, "context canceled") {
		t.Errorf("show after kill; want its result under status %v:\n%s", list[0]["status"], show)
	}
	code, out, _ = p.Brood("tasks", "--status", list[0]["status"].(string))
	if code != 0 || !regexp.MustCompile(`(?m)^`+id[:12]+`\w*\s+sleeper\s+(cancelled|killed)\s`).MatchString(out) {
		t.Errorf("table after kill:\n%s", out)
	}
	if code := parent.Wait(t); code != 130 && code != 5 {
		t.Errorf("the parent exited %d after its child was killed; stderr:\n%s", code, parent.Stderr.String())
	}
	code, out, _ = p.Brood("tasks", "output", id)
	if code != 0 || !strings.Contains(out, `status="`+list[0]["status"].(string)+`"`) || !strings.Contains(out, "brood tasks resume "+id) {
		t.Errorf("output after kill: code %d\n%s", code, out)
	}

	code, out, errOut = p.Brood("tasks", "kill", id)
	if code != 1 || out != "" || errOut != "brood: task "+id+" is not running (status "+list[0]["status"].(string)+")\n" {
		t.Errorf("killing a stopped task: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = p.Brood("tasks", "kill", "--json", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if code != 1 || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("killing an unknown task: code %d, stderr %q", code, errOut)
	}

	// It stays resumable: the same task continues.
	code, out, errOut = p.BroodWithin(time.Minute, "tasks", "resume", id, "wake up")
	if code != 0 || !strings.Contains(out, `status="done"`) || !strings.Contains(out, "Awake again after the stop.") {
		t.Errorf("resume after kill: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestTasksKillJSON: kill --json, on a task whose parent is a separate process.
func TestTasksKillJSON(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	parent := p.Start(nil, "subagent", "--background", "sleeper", "think")
	id := p.RunningTask()
	p.WaitTranscript(id, "the child's first turn", func(r session.Record) bool { return r.Type == session.RecMessage })
	code, out, errOut := p.Brood("tasks", "kill", "--json", id)
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["task_id"] != id || v["killed"] != true || v["pid"].(float64) <= 0 {
		t.Fatalf("kill --json: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	parent.Wait(t)
	var res dispatch.Result
	clitest.ReadRecord(t, p.Root, id, dispatch.ResultFile, &res)
	if (res.Status != "cancelled" && res.Status != "killed") || res.ResumeHandle != id {
		t.Errorf("result after kill: %+v", res)
	}
}

// TestRefusedKillLeavesTheTaskRunning: a kill that finds no process of the
// task to stop (here its owner holds the task's lock but runs no child of
// it) fails and records nothing: the listing still says running, and once
// the owner lets go, the task's own outcome, never "killed" (the kill was
// recorded before the look and never taken back: review prochide P1).
func TestRefusedKillLeavesTheTaskRunning(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("scout", "what is in the README?")
	// This test process is the task's owner now: it holds the lock, as the
	// parent that runs a task does, but it started no child of the task.
	lock, err := os.Open(taskdir.Open(p.Root).MustTask(id).Path())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	status := func() any {
		for _, item := range p.ListJSON() {
			if item["id"] == id {
				return item["status"]
			}
		}
		return nil
	}
	if st := status(); st != dispatch.StatusRunning {
		t.Fatalf("the held task is listed %v, want running", st)
	}
	code, out, errOut := p.BroodWithin(time.Minute, "tasks", "kill", id)
	if code != 1 || out != "" || !strings.Contains(errOut, "has no contained child process of this task") {
		t.Fatalf("kill of a task with no child: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if st := status(); st != dispatch.StatusRunning {
		t.Errorf("after a refused kill the task is listed %v, want running", st)
	}
	if _, show, _ := p.Brood("tasks", "show", id); strings.Contains(show, "stopped by the user") {
		t.Errorf("show after a refused kill says it was stopped:\n%s", show)
	}
	lock.Close()
	if st := status(); st != dispatch.StatusDone {
		t.Errorf("once its owner let go the task is listed %v, want done", st)
	}
}
