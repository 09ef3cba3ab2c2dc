package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestAPlanCallIsShownAsASingleCallIs (issue 26, P2-2, P2-6, P3): through
// the CLI, `brood tasks show` of a finished plan's call names the worker
// that ran it and its attempts, as a single call's does; `brood workflow
// show --json` of the fleet run counts its calls by status, as the local
// engine's does; and with the server down `brood tasks show` reads the
// call from this project's kept result of the run, saying so.
func TestAPlanCallIsShownAsASingleCallIs(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("plancall-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	startBrood(t, workerProject(t, cliScript), nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "2"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: shown\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"answer yes\"}, {agent: explore, prompt: \"two\"}]\n")
	code, out, errs := brood("workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml")
	var res wf.Result
	if json.Unmarshal([]byte(out), &res) != nil || code != 0 || res.Status != wf.RunDone || len(res.Phases) != 1 || len(res.Phases[0].Calls) != 2 {
		t.Fatalf("workflow run --engine temporal: exit %d\n%s\n%s", code, out, errs)
	}
	id := res.Phases[0].Calls[0].TaskID
	code, out, errs = brood("tasks", "show", id)
	if code != 0 || !strings.Contains(out, "\nworker   brood-worker:") || !strings.Contains(out, "(ran it; 1 attempt(s) on the fleet)") {
		t.Errorf("tasks show of a finished plan call: exit %d; want its worker and attempts\n%s\n%s", code, out, errs)
	}
	code, out, errs = brood("workflow", "show", res.RunID, "--json")
	var shown struct {
		Engine string
		Calls  map[string]int
	}
	if json.Unmarshal([]byte(out), &shown) != nil || code != 0 || shown.Engine != "temporal" || !maps.Equal(shown.Calls, map[string]int{wf.CallDone: 2}) {
		t.Errorf("workflow show --json of the fleet run: exit %d, calls %v; want {done: 2}\n%s\n%s", code, shown.Calls, out, errs)
	}

	srv.Kill()
	code, out, errs = brood("tasks", "show", id[:16])
	if code != 0 || !strings.Contains(out, "task     "+id+" (a call of fleet plan run "+res.RunID+", read from this project's kept result") ||
		!strings.Contains(out, "status   done") || !strings.Contains(out, "yes, from the fleet") || !strings.Contains(out, "\nworker   brood-worker:") ||
		!strings.Contains(out, "\nkept     "+filepath.Join(sub.Root, ".brood", "workflows", res.RunID, "result.json")+"\n") || !strings.Contains(out, "fleet    cannot reach Temporal") {
		t.Errorf("tasks show of a plan call with the server down: exit %d; want it read from the kept result, saying so\n%s\n%s", code, out, errs)
	}
}
