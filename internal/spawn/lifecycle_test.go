package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
)

func TestBackgroundTaskOutputAndNotice(t *testing.T) {
	script := `
agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "bg", prompt: "look", run_in_background: true}
    - say: "started"
      tools:
        - TaskOutput: {task_id: '{{match "task_id=.([0-9A-Z]+)" (result 0)}}', wait_seconds: 60}
    - say: "collected: {{trunc 2000 (result 0)}}"
  explore:
    - tools: [{Read: {file_path: README.md}}]
    - say: "background report: {{first (result 0)}}"
`
	p := newProject(t, script, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, msgs := p.runRoot(context.Background(), d)
	results := toolResults(msgs)
	if !strings.Contains(results[0], "in the background (task_id=") {
		t.Fatalf("Task did not return a task id at once:\n%s", results[0])
	}
	if !strings.Contains(results[1], "status: done") || !strings.Contains(results[1], "background report:") {
		t.Fatalf("TaskOutput did not return the verified result:\n%s", results[1])
	}
	if !strings.Contains(out.Text, "collected:") {
		t.Fatalf("root: %s", out.Text)
	}
	d.WaitBackground()
	if n := d.Notices(); len(n) != 1 || !strings.Contains(n[0], "finished with status done") {
		t.Fatalf("notices %q", n)
	}
}

func TestNoticeReachesRunningLoop(t *testing.T) {
	script := `
agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "bg", prompt: "look", run_in_background: true}
    - tools:
        - TaskOutput: {task_id: '{{match "task_id=.([0-9A-Z]+)" (result 0)}}', wait_seconds: 60}
    - cases:
        - if: "finished with status done"
          say: "got the notice"
      say: "no notice"
  explore:
    - say: "quick"
`
	p := newProject(t, script, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	// Drive the loop with the dispatcher's notices as its Inject.
	out, _ := p.runRootWith(context.Background(), d, d.Notices)
	if out.Text != "got the notice" {
		t.Fatalf("root ended with %q", out.Text)
	}
	recs, _, err := session.ReadFile(p.lastRootTranscript)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if r.Type == session.RecSteer && strings.Contains(r.Text, "Background task") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the background notice never reached the root's transcript")
	}
}

func TestResumeContinuesTranscript(t *testing.T) {
	agents := map[string]string{
		"stepper": "---\nname: stepper\ndescription: works in steps\ntools: Read\nmaxTurns: 1\n---\nYou work in steps.\n",
	}
	script := `
agents:
  stepper:
    - say: "step one"
      tools: [{Read: {file_path: README.md}}]
    - cases:
        - if: "carry on"
          say: "step two, after: {{first (result 0)}}"
      say: "step two without the follow-up"
`
	p := newProject(t, script, agents)
	d := p.dispatcher(p.settings(nil), 1, nil)
	first, err := d.Call(context.Background(), call.Spec{Agent: "stepper", Prompt: "go"})
	must(t, err)
	if first.Record.Status != "partial" || first.Record.ResumeHandle != first.TaskID {
		t.Fatalf("first run: %s, handle %q", first.Record.Status, first.Record.ResumeHandle)
	}
	if _, err := d.Call(context.Background(), call.Spec{Resume: "01ARZ3NDEKTSV4RRFFQ69G5FAV", Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "no task") {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := d.Call(context.Background(), call.Spec{Resume: "../dispatch/" + first.TaskID, Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "not a task id") {
		t.Fatalf("a path as id: %v", err)
	}
	again, err := d.Call(context.Background(), call.Spec{Resume: first.TaskID, Prompt: "carry on"})
	must(t, err)
	if again.TaskID != first.TaskID || again.Record.Status != "done" {
		t.Fatalf("resume: %s %s\n%s", again.TaskID, again.Record.Status, again.Text)
	}
	if !strings.Contains(again.Text, "step two, after:") {
		t.Fatalf("resume lost its place or its follow-up:\n%s", again.Text)
	}
	recs, _, err := session.ReadFile(filepath.Join(dispatch.Dir(p.root, first.TaskID), dispatch.SessionFile))
	must(t, err)
	metas := 0
	for _, r := range recs {
		if r.Type == session.RecMeta {
			metas++
		}
	}
	st := session.Replay(recs)
	if metas != 2 || st.Turns != 2 {
		t.Fatalf("transcript has %d runs and %d turns, want 2 and 2 (appended, not recreated)", metas, st.Turns)
	}
	if !dispatch.Exists(filepath.Join(dispatch.Dir(p.root, first.TaskID), "result.0.json")) {
		t.Errorf("the first run's result was not kept")
	}
}

func TestSteeringChangesWhatChildDoes(t *testing.T) {
	agents := map[string]string{
		"worker": "---\nname: worker\ndescription: works\ntools: Bash, Read\n---\nYou work.\n",
	}
	script := `
agents:
  worker:
    - say: "waiting for the go-ahead"
      tools:
        - Bash: {command: "while [ ! -e go-ahead ]; do sleep 0.02; done; echo proceeding"}
    - cases:
        - if: "CHANGE PLAN"
          say: "Changed course as the parent asked."
      say: "Kept the original plan."
`
	p := newProject(t, script, agents)
	d := p.dispatcher(p.settings(nil), 1, nil)
	id, err := d.Start(context.Background(), call.Spec{Agent: "worker", Prompt: "work"})
	must(t, err)
	// Wait until the child is inside its first tool call.
	transcript := filepath.Join(dispatch.Dir(p.root, id), dispatch.SessionFile)
	waitUntil(t, 30*time.Second, func() bool {
		recs, _, _ := session.ReadFile(transcript)
		for _, r := range recs {
			if r.Type == session.RecToolCall {
				return true
			}
		}
		return false
	})
	must(t, spawn.Send(p.root, id, "the parent agent", "CHANGE PLAN: stop and report"))
	must(t, os.WriteFile(filepath.Join(p.root, "go-ahead"), nil, 0o644))
	status, text, err := d.Output(context.Background(), id, time.Minute)
	must(t, err)
	if status != "done" || !strings.Contains(text, "Changed course as the parent asked.") {
		t.Fatalf("steering did not change the child: %s\n%s", status, text)
	}
	recs, _, _ := session.ReadFile(transcript)
	steered := false
	for _, r := range recs {
		if r.Type == session.RecSteer && strings.Contains(r.Text, "CHANGE PLAN") {
			steered = true
		}
	}
	if !steered {
		t.Fatal("the steering message is not in the child's transcript")
	}
	if err := spawn.Send(p.root, id, "the parent agent", "too late"); err == nil {
		t.Fatal("sending to a finished task succeeded")
	}
}

func TestCheckpointAndFixAttemptLimit(t *testing.T) {
	agents := map[string]string{
		"deployer": "---\nname: deployer\ndescription: deploys\ntools: Bash\n---\nYou deploy.\n",
		"fixer":    "---\nname: fixer\ndescription: fixes\ntools: Bash\n---\nYou fix.\n",
	}
	script := `
agents:
  deployer:
    - say: |
        ## CHECKPOINT REACHED
        **Type:** decision
        **Progress:** 1/3 tasks

        ### Completed Tasks
        | Task | Name | Commit | Files |
        |------|------|--------|-------|
        | 1    | build | abc1234 | Makefile |

        ### Current Task
        **Task 2:** pick a region
        **Status:** awaiting decision
        **Blocked by:** which region to deploy to
  fixer:
    - tools: [{Bash: {command: "exit 1"}}]
    - tools: [{Bash: {command: "exit 1"}}]
    - tools: [{Bash: {command: "exit 1"}}]
    - tools: [{Bash: {command: "exit 1"}}]
    - tools: [{Bash: {command: "exit 1"}}]
    - tools: [{Bash: {command: "exit 1"}}]
`
	p := newProject(t, script, agents)
	d := p.dispatcher(p.settings(nil), 1, nil)
	cp, err := d.Call(context.Background(), call.Spec{Agent: "deployer", Prompt: "deploy"})
	must(t, err)
	c := cp.Record.Checkpoint
	if cp.Record.Status != "checkpoint" || c == nil || c.Type != "decision" || c.Completed != 1 || c.Total != 3 ||
		len(c.Tasks) != 1 || c.Tasks[0].Commit != "abc1234" || !strings.Contains(c.Blocker, "region") {
		t.Fatalf("checkpoint not parsed: %s %+v", cp.Record.Status, c)
	}
	if !strings.Contains(cp.Text, "CHECKPOINT REACHED") || cp.Record.ResumeHandle == "" {
		t.Fatalf("checkpoint not rendered with a resume handle:\n%s", cp.Text)
	}
	fx, err := d.Call(context.Background(), call.Spec{Agent: "fixer", Prompt: "fix"})
	must(t, err)
	if fx.Record.Status != "checkpoint" || fx.Record.Checkpoint == nil || !strings.Contains(fx.Record.Checkpoint.Blocker, "fix-attempt limit") {
		t.Fatalf("fix loop not stopped: %s %+v\n%s", fx.Record.Status, fx.Record.Checkpoint, fx.Text)
	}
	if fx.Record.Turns > 4 {
		t.Fatalf("fixer ran %d turns past the limit", fx.Record.Turns)
	}
}

func waitUntil(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		<-tick.C
	}
}
