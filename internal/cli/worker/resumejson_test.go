package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// fleetJSON is the shape of a fleet call's --json: the local call's
// result{…} and output{…}, with the fleet's worker and attempts.
type fleetJSON struct {
	TaskID string  `json:"task_id"`
	Status string  `json:"status"`
	Patch  *string `json:"patch"`
	Result *struct {
		TaskID  string `json:"task_id"`
		Agent   string `json:"agent"`
		Status  string `json:"status"`
		Summary string `json:"summary"`
		Usage   *struct {
			Input int64 `json:"input"`
		} `json:"usage"`
		Worker string `json:"worker"`
	} `json:"result"`
	Output *struct {
		Worker   string `json:"worker"`
		Attempts int    `json:"attempts"`
		WallMS   int64  `json:"wall_ms"`
	} `json:"output"`
}

// check says what the document lacks of the shape.
func (j fleetJSON) check(id, agent string) string {
	var miss []string
	if j.TaskID != id || j.Patch == nil {
		miss = append(miss, "task_id and patch")
	}
	if r := j.Result; r == nil || r.TaskID != id || r.Agent != agent || r.Status != j.Status || r.Summary == "" || r.Usage == nil || r.Usage.Input == 0 || r.Worker == "" {
		miss = append(miss, "result{task_id, agent, status, summary, usage, worker}")
	}
	if o := j.Output; o == nil || o.Worker == "" || o.Attempts < 1 || o.WallMS <= 0 {
		miss = append(miss, "output{worker, attempts, wall_ms}")
	}
	return strings.Join(miss, ", ")
}

// TestFleetResumeJSONHasTheSubagentShape (issue 26): brood tasks resume
// ID PROMPT --json of a fleet call prints what brood subagent --engine
// temporal --json printed for it: result{…usage…}, output{…} with the
// worker and attempts, patch.
func TestFleetResumeJSONHasTheSubagentShape(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("resumejson-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	startBrood(t, workerProject(t, cliScript), nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "2"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }

	code, out, errs := brood("subagent", "explore", "one", "--engine", "temporal", "--json")
	var first fleetJSON
	if json.Unmarshal([]byte(out), &first) != nil || code != 0 || first.TaskID == "" {
		t.Fatalf("subagent --engine temporal --json: exit %d\n%s\n%s", code, out, errs)
	}
	if miss := first.check(first.TaskID, "explore"); miss != "" {
		t.Fatalf("subagent --engine temporal --json lacks %s\n%s", miss, out)
	}
	code, out, errs = brood("tasks", "resume", first.TaskID, "answer yes", "--json")
	var again fleetJSON
	if err := json.Unmarshal([]byte(out), &again); err != nil || code != 0 || again.Status != "done" {
		t.Fatalf("tasks resume --json of the fleet call: exit %d (%v)\n%s\n%s", code, err, out, errs)
	}
	if miss := again.check(first.TaskID, "explore"); miss != "" {
		t.Errorf("tasks resume --json of a fleet call lacks %s, which subagent --engine temporal --json has\n%s", miss, out)
	}
}
