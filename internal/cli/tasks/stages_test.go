package tasks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/taskdir"
)

// stagesRoot is a root agent that makes a Task call, resumes its task
// through Task, and starts a background task and collects it.
const stagesRoot = `
agents:
  root:
    - tools:
        - Task: {subagent_type: stepper, description: "fg", prompt: "go"}
    - tools:
        - Task: {resume_task_id: '{{match "task-id=.([0-9A-Z]+)" (result 0)}}', prompt: "carry on"}
    - tools:
        - Task: {subagent_type: scout, description: "bg", prompt: "read it", run_in_background: true}
    - tools:
        - TaskOutput: {task_id: '{{match "task_id=.([0-9A-Z]+)" (result 0)}}', wait_seconds: 60}
    - say: "all done"
`

// TestEveryEntryPointRunsTheStages: a Task call, a background task, a
// resume through Task, ` + "`brood subagent`" + `, ` + "`brood tasks resume`" + ` and a
// workflow call all run the call pipeline's stages, in order, each run of
// each task (the [STAGE] lines of the debug log).
func TestEveryEntryPointRunsTheStages(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	p.Env["BROOD_DEBUG_AGENT_LOG"] = "1"
	root := p.Script("root.yaml", strings.Replace(clitest.DelegationScript, "agents:\n", "agents:\n"+strings.TrimPrefix(stagesRoot, "\nagents:\n"), 1))
	code, out, errOut := p.Brood("run", "--model", root, "go")
	if code != 0 || !strings.Contains(out, "all done") {
		t.Fatalf("brood run: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	runIDs := clitest.TaskIDs(t, p.Root)
	sub := p.DispatchOK("stepper", "go")
	if code, out, errOut := p.Brood("tasks", "resume", sub, "carry", "on"); code != 0 {
		t.Fatalf("tasks resume: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	clitest.WriteFile(t, filepath.Join(p.Root, "plan.yaml"), "name: one\nphases:\n  - id: look\n    parallel:\n      - agent: scout\n        prompt: \"read it\"\n")
	if code, out, errOut := p.Brood("workflow", "run", "--yes", "plan.yaml"); code != 0 {
		t.Fatalf("workflow run: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(taskdir.Open(p.Root).DebugLog())
	if err != nil {
		t.Fatal(err)
	}
	// Each task's runs, as the stage sequences its [STAGE] lines give.
	runs := map[string][][]call.Stage{}
	re := regexp.MustCompile(`\[STAGE\] task=(\S+) stage=(\S+)`)
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		id, s := m[1], call.Stage(m[2])
		if s == call.StageAcquire || len(runs[id]) == 0 {
			runs[id] = append(runs[id], nil)
		}
		last := len(runs[id]) - 1
		runs[id][last] = append(runs[id][last], s)
	}
	want := map[string]int{sub: 2} // the subagent call and its resume
	for _, id := range runIDs {
		want[id] = 1
	}
	if len(runIDs) != 2 {
		t.Fatalf("brood run left tasks %v, want the Task call's and the background one's", runIDs)
	}
	// The first task was resumed through Task: two runs.
	first := ""
	for _, id := range runIDs {
		if len(runs[id]) == 2 {
			first = id
		}
	}
	if first == "" {
		t.Fatalf("no task of brood run ran twice (the resume through Task): %v", runs)
	}
	want[first] = 2
	for _, id := range clitest.TaskIDs(t, p.Root) {
		if _, ok := want[id]; !ok {
			want[id] = 1 // the workflow's call
		}
	}
	if len(want) != 4 {
		t.Fatalf("tasks %v, want brood run's two, the subagent's and the workflow's", want)
	}
	for id, n := range want {
		if len(runs[id]) != n {
			t.Errorf("task %s: %d runs in the debug log, want %d", id, len(runs[id]), n)
		}
		for i, got := range runs[id] {
			if !slices.Equal(got, call.Stages()) {
				t.Errorf("task %s run %d ran stages %v, want %v", id, i+1, got, call.Stages())
			}
		}
	}
	if t.Failed() {
		t.Logf("debug log:\n%s", b)
	}
}
