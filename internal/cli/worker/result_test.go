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

// TestFleetRunLeavesItsResultAndResumeSaysFinished (issue 26, items 3 and
// 4): a plan run with --engine temporal leaves
// .brood/workflows/<run_id>/result.json in the submitter's project, as
// the local engine does; `workflow resume` of the finished run says it
// had finished (not "resumed") and runs nothing.
func TestFleetRunLeavesItsResultAndResumeSaysFinished(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("result-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	w := startBrood(t, workerProject(t, cliScript), nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "2"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: res\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"one\"}, {agent: explore, prompt: \"two\"}]\n")
	code, out, errs := brood("workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml")
	var res wf.Result
	if json.Unmarshal([]byte(out), &res) != nil || code != 0 || res.Status != wf.RunDone {
		t.Fatalf("workflow run --engine temporal: exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(sub.Root, ".brood", "workflows", res.RunID, "result.json"))
	var kept wf.Result
	if err != nil || json.Unmarshal(b, &kept) != nil || kept.RunID != res.RunID || kept.Status != wf.RunDone || kept.Agents != 2 {
		t.Fatalf("the fleet run's result.json in the submitter's project: %v\n%s", err, b)
	}
	calls := strings.Count(w.log(), "[DISPATCH]")
	code, out, errs = brood("workflow", "resume", res.RunID)
	if code != 0 || !strings.Contains(errs, "had already finished (done)") || strings.Contains(errs, res.RunID+" resumed") {
		t.Fatalf("workflow resume of a finished fleet run: exit %d; want it to say the run had finished\n%s\n%s", code, out, errs)
	}
	if n := strings.Count(w.log(), "[DISPATCH]"); n != calls {
		t.Fatalf("resume of a finished run dispatched %d call(s) on the worker", n-calls)
	}
}
