package tasks_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
)

// TestTasksSend steers a running child: the message is recorded in its
// transcript and changes what it says next. A finished or unknown task
// refuses the message.
func TestTasksSend(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	parent := p.Start(nil, "subagent", "--background", "worker", "work")
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(p.Root, "go-ahead"), nil, 0o644) })
	id := p.RunningTask()
	transcript := filepath.Join(dispatch.Dir(p.Root, id), dispatch.SessionFile)
	// Wait until the child is inside its first tool call: the message then
	// arrives at the next turn boundary.
	p.WaitTranscript(id, "the child's first tool call", func(r session.Record) bool { return r.Type == session.RecToolCall && r.Tool == "Bash" })
	code, out, errOut := p.Brood("tasks", "send", id, "CHANGE PLAN:", "stop and report")
	if code != 0 || out != "message queued for task "+id+"; it arrives at its next turn (if the task ends first, brood tasks output "+id+" says it was not delivered)\n" {
		t.Fatalf("send: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = p.Brood("tasks", "send", "--json", id, "and be brief")
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["task_id"] != id || v["queued"] != true {
		t.Fatalf("send --json: code %d, stdout %q", code, out)
	}
	if err := os.WriteFile(filepath.Join(p.Root, "go-ahead"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := parent.Wait(t); code != 0 {
		t.Fatalf("the parent exited %d; stderr:\n%s", code, parent.Stderr.String())
	}

	code, out, _ = p.Brood("tasks", "output", id)
	if code != 0 || !strings.HasPrefix(out, "status: done\n") || !strings.Contains(out, "\nChanged course as the parent asked.\n") {
		t.Errorf("the message did not change what the child said: code %d\n%s", code, out)
	}
	recs, _, err := session.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	var steers []string
	for _, r := range recs {
		if r.Type == session.RecSteer {
			steers = append(steers, r.Text)
		}
	}
	if len(steers) != 2 || !strings.HasSuffix(steers[0], "\nCHANGE PLAN: stop and report") || !strings.HasSuffix(steers[1], "\nand be brief") {
		t.Errorf("steering records in the transcript: %q", steers)
	}
	code, out, _ = p.Brood("tasks", "log", id)
	if code != 0 || !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d ✉ \[message from the user \(brood tasks send\), delivered while you work\]\n\s+CHANGE PLAN: stop and report$`).MatchString(out) {
		t.Errorf("the log does not show the message:\n%s", out)
	}
	if ents, _ := os.ReadDir(filepath.Join(dispatch.Dir(p.Root, id), dispatch.InboxDir)); len(ents) != 0 {
		t.Errorf("the inbox still holds %d message(s)", len(ents))
	}

	code, out, errOut = p.Brood("tasks", "send", id, "too late")
	if code != 1 || out != "" || errOut != "brood: task "+id+" (worker) is not running (status done); resume it with this message instead (brood tasks resume "+id+" \"...\")\n" {
		t.Errorf("send to a finished task: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = p.Brood("tasks", "send", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "hello")
	if code != 1 || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("send to an unknown task: code %d, stderr %q", code, errOut)
	}
}

// TestTasksSendUndelivered sends a message to a child in the middle of its
// last (hour-long) model call, then stops the child: the message never
// reached it, and the record says so (today's main left it in the inbox
// without a word). A message sent after the end is refused.
func TestTasksSendUndelivered(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	parent := p.Start(nil, "subagent", "--background", "sleeper", "think")
	id := p.RunningTask()
	// The prompt is in the transcript once the turn boundary's inbox was
	// read: the message below waits for a turn that never comes.
	p.WaitTranscript(id, "the child's first turn", func(r session.Record) bool { return r.Type == session.RecMessage })
	code, _, errOut := p.Brood("tasks", "send", id, "CHANGE PLAN:", "report now")
	if code != 0 {
		t.Fatalf("send: code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := p.Brood("tasks", "kill", id); code != 0 {
		t.Fatalf("kill: code %d, stderr %q", code, errOut)
	}
	parent.Wait(t)
	code, out, _ := p.Brood("tasks", "output", id)
	if code != 0 || !strings.HasSuffix(out, "\nnot delivered (the task ended first): CHANGE PLAN: report now\n") {
		t.Errorf("output does not say the message was not delivered: code %d\n%s", code, out)
	}
	code, out, _ = p.Brood("tasks", "output", "--json", id)
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || fmt.Sprint(v["undelivered"]) != "[CHANGE PLAN: report now]" {
		t.Errorf("output --json: code %d\n%s", code, out)
	}
	if ents, _ := os.ReadDir(filepath.Join(dispatch.Dir(p.Root, id), dispatch.InboxDir)); len(ents) != 1 || ents[0].Name() != spawn.UndeliveredDir {
		t.Errorf("the inbox holds %v, want only the undelivered record", ents)
	}
	code, out, errOut = p.Brood("tasks", "send", id, "too late")
	if code != 1 || out != "" || !strings.Contains(errOut, "is not running (status ") || !strings.Contains(errOut, "resume it with this message instead (brood tasks resume "+id) {
		t.Errorf("send to a stopped task: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}
