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
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	wf "github.com/broodhq/brood/internal/workflow"
)

const resumeScript = `
agents:
  explore:
    - cases:
        - if: "interrupted"
          say: "picked up again and finished"
        - if: "slow"
          say: "thinking for an hour"
          delay: 1h
      say: "done quickly"
    # A call killed after its model answered but before its parent recorded
    # the result is continued: the model is asked again.
    - say: "picked up again and finished"
`

const resumePlan = `
name: durable
phases:
  - id: p
    parallel:
      - {id: q1, agent: explore, prompt: "quick one"}
      - {id: q2, agent: explore, prompt: "quick two"}
      - {id: q3, agent: explore, prompt: "quick three"}
      - {id: s, agent: explore, prompt: "slow one"}
`

// waitFor polls cond (another process's records) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// runDir is the only run directory of the project.
func runDir(p *project) string {
	m, _ := filepath.Glob(filepath.Join(p.Root, ".brood", "workflows", "*", "run.json"))
	if len(m) != 1 {
		return ""
	}
	return filepath.Dir(m[0])
}

func list(t *testing.T, p *project) []engine.RunInfo {
	t.Helper()
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "list", "--json")
	var runs []engine.RunInfo
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil {
		t.Fatalf("workflow list: exit %d\n%s\n%s", code, out, errs)
	}
	return runs
}

// TestKill9ThenResume: the process running a workflow is killed with
// SIGKILL while one call runs and three have finished; `brood workflow
// list` tells running from dead, and `brood workflow resume` finishes the
// run without running any finished call again, continuing the one that
// was mid-run from its own transcript.
func TestKill9ThenResume(t *testing.T) {
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
	var before map[string]string // call key → task id, as journaled
	waitFor(t, "three calls done and one running", func() bool {
		if dir = runDir(p); dir == "" {
			return false
		}
		lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
		started, done, _, open := wf.Summary(lines)
		return started == 4 && done == 3 && open == 1
	})
	lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
	before = map[string]string{}
	for _, l := range lines {
		if l.Type == "start" {
			before[l.Key] = l.TaskID
		}
	}
	slow := before["p/s"]
	waitFor(t, "the slow child to start", func() bool {
		tk, err := dispatch.LoadTask(p.Root, slow)
		return err == nil && tk.Status == dispatch.StatusRunning
	})
	if runs := list(t, p); len(runs) != 1 || runs[0].Status != wf.RunRunning {
		t.Fatalf("while it runs, list shows %+v; want one running run", runs)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitFor(t, "the orphaned child to record its end", func() bool {
		tk, err := dispatch.LoadTask(p.Root, slow)
		return err == nil && tk.Status != dispatch.StatusRunning && tk.Status != dispatch.StatusQueued
	})
	runs := list(t, p)
	if len(runs) != 1 || runs[0].Status != wf.RunInterrupted {
		t.Fatalf("after kill -9, list shows %+v; want it interrupted", runs)
	}
	id := runs[0].RunID
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "resume", id, "--json")
	var res wf.Result
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	if got := js(res.Outputs["p"]); got != `["done quickly","done quickly","done quickly","picked up again and finished"]` {
		t.Fatalf("outputs after resume: %s", got)
	}
	checkNoneRanTwice(t, p, &res, before)
	// The progress says the three journaled calls are done, never queued.
	if !strings.Contains(errs, "phase p (parallel) done: 4 done (3 journaled), 0 running") || strings.Contains(errs, "0 done, 0 running") {
		t.Errorf("resume's progress; want the journaled calls done from its first line:\n%s", errs)
	}
	if res.Agents != 4 {
		t.Errorf("agents %d, want 4", res.Agents)
	}
	if runs := list(t, p); runs[0].Status != wf.RunDone {
		t.Errorf("after resume, list shows %s", runs[0].Status)
	}
}

// checkNoneRanTwice: every call journaled before the kill ended under the
// same task; only the one that was mid-run was continued (its earlier
// result kept beside the new one); no task was created twice.
func checkNoneRanTwice(t *testing.T, p *project, res *wf.Result, before map[string]string) {
	t.Helper()
	after := map[string]string{}
	for _, c := range phase(t, res, "p").Calls {
		after[c.Key] = c.TaskID
	}
	for key, task := range before {
		if after[key] != task {
			t.Errorf("%s ran as task %s before the kill and %s after: a call was re-created", key, task, after[key])
		}
		resumed := exists(filepath.Join(dispatch.Dir(p.Root, task), "result.0.json"))
		if key == "p/s" && !resumed {
			t.Errorf("the mid-run call was not continued from its transcript (no earlier result kept)")
		}
		if key != "p/s" && resumed {
			t.Errorf("finished call %s ran twice", key)
		}
	}
	ents, _ := os.ReadDir(dispatch.Root(p.Root))
	if n := countTasks(ents); n != 4 {
		t.Errorf("%d task directories, want 4: no call ran twice", n)
	}
}

func countTasks(ents []os.DirEntry) int {
	n := 0
	for _, e := range ents {
		if e.IsDir() && dispatch.CheckID(e.Name()) == nil {
			n++
		}
	}
	return n
}

// TestApproval: without a terminal and without --yes nothing starts and
// the exit status is 2, with a line saying what to do.
func TestApproval(t *testing.T) {
	p := newProject(t, resumeScript)
	plan := p.plan("one.yaml", "name: one\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"quick one\"}]\n")
	code, _, errs := p.Brood(context.Background(), nil, "workflow", "run", plan)
	if code != 2 || !strings.Contains(errs, "--yes") || !strings.Contains(errs, "1 agents") {
		t.Fatalf("exit %d, stderr:\n%s\nwant 2 and a line naming --yes and the agent count", code, errs)
	}
	if runDir(p) != "" {
		t.Fatal("a run was recorded without approval")
	}
	code, out, _ := p.Brood(context.Background(), nil, "workflow", "run", "--yes", plan)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("with --yes: exit %d\n%s", code, out)
	}
	code, out, _ = p.Brood(context.Background(), nil, "workflow", "validate", plan)
	if code != 0 || !strings.Contains(out, "valid") {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}
}

// TestResumeOfAFinishedRunNeedsNoModel: resuming a local run that had
// finished only shows its result, so it works with no model configured,
// as the fleet's does.
func TestResumeOfAFinishedRunNeedsNoModel(t *testing.T) {
	p := newProject(t, resumeScript)
	res, code, stderr := p.run(p.plan("one.yaml", "name: one\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"quick one\"}]\n"))
	if code != 0 || res.Status != wf.RunDone {
		t.Fatalf("run: exit %d, %s\n%s", code, res.Status, stderr)
	}
	if err := os.WriteFile(filepath.Join(p.Root, ".brood", "settings.toml"), []byte("[pool]\nping_interval = \"100ms\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := p.Brood(context.Background(), []string{"BROOD_MODEL="}, "workflow", "resume", res.RunID)
	if code != 0 || !strings.Contains(errOut, "had already finished (done)") || !strings.Contains(out, res.RunID+" done") {
		t.Fatalf("resume of a finished run with no model: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
