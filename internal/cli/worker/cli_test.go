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

const cliScript = `
agents:
  explore:
    - cases:
        - if: "answer yes"
          say: "yes, from the fleet"
      say: "plain answer"
`

// TestFleetFromTheCommandLine: brood subagent --engine temporal, brood
// workflow run --engine temporal, and the listings that show fleet runs
// beside local ones (workflow list/show, tasks).
func TestFleetFromTheCommandLine(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("cli-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	startBrood(t, workerProject(t, cliScript), nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "2"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }

	code, out, errs := brood("subagent", "explore", "answer yes", "--engine", "temporal", "--json")
	var call struct {
		TaskID  string `json:"task_id"`
		Status  string `json:"status"`
		Summary string `json:"summary"`
	}
	if json.Unmarshal([]byte(out), &call) != nil || code != 0 || call.Status != "done" || !strings.Contains(call.Summary, "yes, from the fleet") {
		t.Fatalf("subagent --engine temporal: exit %d\n%s\n%s", code, out, errs)
	}
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: cli\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"one\"}, {agent: explore, prompt: \"two\"}]\n")
	code, out, errs = brood("workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml")
	var res wf.Result
	if json.Unmarshal([]byte(out), &res) != nil || code != 0 || res.Status != wf.RunDone || res.Agents != 2 {
		t.Fatalf("workflow run --engine temporal: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = brood("workflow", "list")
	if code != 0 || !strings.Contains(out, res.RunID) || !strings.Contains(out, "temporal") {
		t.Fatalf("workflow list: exit %d, no fleet run %s\n%s\n%s", code, res.RunID, out, errs)
	}
	code, out, errs = brood("workflow", "show", res.RunID)
	if code != 0 || !strings.Contains(out, "engine   temporal") || !strings.Contains(out, "status   done") {
		t.Fatalf("workflow show: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = brood("tasks")
	if code != 0 || !strings.Contains(out, "on the fleet") || !strings.Contains(out, call.TaskID) || !strings.Contains(out, res.RunID) {
		t.Fatalf("tasks: exit %d, want the fleet's call %s and run %s\n%s\n%s", code, call.TaskID, res.RunID, out, errs)
	}
	code, out, errs = brood("tasks", "--json")
	var rows []struct{ ID, Fleet, Kind, Status string }
	if json.Unmarshal([]byte(out), &rows) != nil || code != 0 {
		t.Fatalf("tasks --json: exit %d\n%s\n%s", code, out, errs)
	}
	kinds := map[string]string{}
	for _, r := range rows {
		if r.Fleet == "temporal" {
			kinds[r.ID] = r.Kind + " " + r.Status
		}
	}
	if kinds[call.TaskID] != "call done" || kinds[res.RunID] != "plan done" {
		t.Fatalf("tasks --json: fleet rows %v; want call %s and plan %s, done\n%s", kinds, call.TaskID, res.RunID, out)
	}
	code, out, errs = brood("tasks", "show", call.TaskID)
	if code != 0 || !strings.Contains(out, "on the fleet") || !strings.Contains(out, "yes, from the fleet") || !strings.Contains(out, "agent    explore") {
		t.Fatalf("tasks show of a fleet call: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = brood("tasks", "show", call.TaskID, "--json")
	var shown struct {
		Workflow string
		Result   struct{ Status string }
	}
	if json.Unmarshal([]byte(out), &shown) != nil || code != 0 || shown.Workflow != "brood-call-"+call.TaskID || shown.Result.Status != "done" {
		t.Fatalf("tasks show --json of a fleet call: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs = brood("tasks", "show", "01M8SY7E1DE81H67HQD86RCVWX"); code == 0 {
		t.Fatalf("tasks show of an unknown id: exit 0\n%s", errs)
	}
	if code, _, errs = brood("workflow", "cancel", res.RunID); code == 0 || !strings.Contains(errs, "not running") {
		t.Fatalf("cancel of a finished fleet run: exit %d\n%s", code, errs)
	}
	// Without an address, --engine temporal says what to set.
	code, _, errs = sub.Brood(ctx, nil, "workflow", "run", "--engine", "temporal", "--yes", "plan.yaml")
	if code == 0 || !strings.Contains(errs, "temporal.address") {
		t.Fatalf("--engine temporal with no address: exit %d\n%s", code, errs)
	}
}
