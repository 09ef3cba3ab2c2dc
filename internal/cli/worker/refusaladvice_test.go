package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

const refusedScript = `
agents:
  general-purpose:
    - tools: [{Bash: {command: "go vet ./..."}}]
    - say: "## What I did\nTried go vet.\n\n## Files changed\nnone"
`

// TestTasksShowOfAFleetRefusalAdvisesTheWorker (issue 26): brood tasks
// show of a fleet call whose child was refused a command for permissions
// says, as brood subagent does, that the rule goes in the worker's
// settings, never to pass --allow (which the fleet refuses from a
// submitter): a single call from its submitter's checkout, and a plan's
// call from a checkout that kept no result of its run, text and --json.
func TestTasksShowOfAFleetRefusalAdvisesTheWorker(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("advice-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	startBrood(t, workerProject(t, refusedScript), nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "2"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brood := func(pr *testbrood.Project, args ...string) (int, string, string) {
		return pr.Brood(ctx, nil, append(args, fleet...)...)
	}
	code, out, errs := brood(sub, "subagent", "general-purpose", "vet it", "--engine", "temporal", "--json")
	var call struct {
		TaskID string `json:"task_id"`
		Text   string `json:"text"`
	}
	if json.Unmarshal([]byte(out), &call) != nil || call.TaskID == "" || !strings.Contains(call.Text, "where brood worker runs") {
		t.Fatalf("subagent --engine temporal: exit %d; want a refusal advising the worker's settings\n%s\n%s", code, out, errs)
	}
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: refused\nphases:\n  - id: p\n    parallel: [{agent: general-purpose, prompt: \"vet it\"}]\n")
	code, out, errs = brood(sub, "workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml")
	var run wf.Result
	if json.Unmarshal([]byte(out), &run) != nil || len(run.Phases) != 1 || len(run.Phases[0].Calls) != 1 {
		t.Fatalf("workflow run --engine temporal: exit %d\n%s\n%s", code, out, errs)
	}
	other := testbrood.NewProject(t, mainEnv, nil) // keeps no result of the run
	for _, tc := range []struct {
		name string
		pr   *testbrood.Project
		id   string
	}{
		{"single call", sub, call.TaskID},
		{"plan call elsewhere", other, run.Phases[0].Calls[0].TaskID},
	} {
		for _, asJSON := range []bool{false, true} {
			args := []string{"tasks", "show", tc.id}
			if asJSON {
				args = append(args, "--json")
			}
			code, out, errs := brood(tc.pr, args...)
			if code != 0 || !strings.Contains(out, "where brood worker runs") || strings.Contains(out, "pass --allow") {
				t.Errorf("%s: brood %s: exit %d; want the worker's settings advised, never --allow\n%s\n%s", tc.name, strings.Join(args, " "), code, out, errs)
			}
		}
	}
}
