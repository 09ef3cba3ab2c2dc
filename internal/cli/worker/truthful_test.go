package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/worker"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

const writerScript = `
agents:
  general-purpose:
    - tools: [{Write: {file_path: one.txt, content: "from the fleet\n"}}]
    - say: "## What I did\nWrote one.txt.\n\n## Files changed\none.txt"
  explore:
    - say: "plain answer"
`

// queueWait is how long the call waits in the queue, no worker polling
// it, before the test starts one: the time the call's duration must count.
const queueWait = 3 * time.Second

// TestFleetCallSaysWhatALocalOneSays (fleetqa4 P2-4, P2-5, P2-7, P3): a
// fleet writer submitted before any worker polls its queue:
//   - its --json has the local call's shape, result{task_id, agent,
//     status, summary, files_changed, usage} and output{} (with the
//     fleet's worker, attempts and wall time), and its tag says
//     patch="applied";
//   - its duration counts from the submit, the wait for a worker in it;
//   - its status lines never drop the worker for the same attempt;
//   - a fleet plan's entry in workflow list --json has its usage and
//     calls, as workflow show --json has them.
func TestFleetCallSaysWhatALocalOneSays(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("truthful-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	wp := workerProject(t, writerScript)
	appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Write\"]\n")
	sub := testbrood.NewProject(t, mainEnv, map[string]string{"one.txt": "base\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }

	done := make(chan ran, 1)
	go func() {
		code, out, errs := brood("subagent", "general-purpose", "write one", "--engine", "temporal", "--json")
		done <- ran{code, out, errs}
	}()
	waitCLI(t, "the call listed on the fleet", func() bool {
		_, out, _ := brood("tasks", "--json")
		var rows []struct{ Fleet, Kind string }
		_ = json.Unmarshal([]byte(out), &rows)
		return slices.ContainsFunc(rows, func(r struct{ Fleet, Kind string }) bool { return r.Fleet == "temporal" && r.Kind == "call" })
	})
	listed := time.Now()
	time.Sleep(queueWait) // the queue time under test, not a synchronisation
	startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "2"}, fleet...)...)
	waited := time.Since(listed)
	r := <-done
	var res struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
		Patch  string `json:"patch"`
		Text   string `json:"text"`
		Result *struct {
			TaskID       string                 `json:"task_id"`
			Agent        string                 `json:"agent"`
			Status       string                 `json:"status"`
			Summary      string                 `json:"summary"`
			FilesChanged []string               `json:"files_changed"`
			Usage        *struct{ Input int64 } `json:"usage"`
			Worker       string                 `json:"worker"`
		} `json:"result"`
		Output *struct {
			Worker   string `json:"worker"`
			Attempts int    `json:"attempts"`
			WallMS   int64  `json:"wall_ms"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || res.Status != "done" || res.Patch != "applied" {
		t.Fatalf("subagent --engine temporal --json: exit %d (%v)\n%s\n%s", r.code, err, r.out, r.errs)
	}
	if rr := res.Result; rr == nil || rr.TaskID != res.TaskID || rr.Agent != "general-purpose" || rr.Status != "done" || !strings.Contains(rr.Summary, "Wrote one.txt") ||
		!slices.Equal(rr.FilesChanged, []string{"one.txt"}) || rr.Usage == nil || rr.Usage.Input == 0 || rr.Worker == "" {
		t.Errorf("--json result: %+v; want the local call's fields (task_id, agent, status, summary, files_changed, usage) and the worker\n%s", rr, r.out)
	}
	if o := res.Output; o == nil || o.Worker == "" || o.Attempts != 1 {
		t.Errorf("--json output: %+v; want the worker and 1 attempt\n%s", o, r.out)
	} else if o.WallMS < waited.Milliseconds() {
		t.Errorf("the call's wall time %d ms; want at least the %v it waited for a worker", o.WallMS, waited)
	}
	if !strings.Contains(res.Text, `status="done" patch="applied"`) {
		t.Errorf("the result tag does not say patch=\"applied\":\n%s", res.Text)
	}
	if d := tagDuration(t, res.Text); d < waited {
		t.Errorf("the tag's duration %v; want at least the %v the call waited for a worker\n%s", d, waited, res.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(sub.Root, "one.txt")); string(b) != "from the fleet\n" {
		t.Errorf("one.txt is %q; want the fleet's change", b)
	}
	named := false
	for _, line := range strings.Split(r.errs, "\n") {
		named = named || strings.Contains(line, " running on worker ")
		if named && line == "task "+res.TaskID+" running" {
			t.Errorf("the status lines drop the worker after naming it:\n%s", r.errs)
		}
	}

	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: use\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"one\"}, {agent: explore, prompt: \"two\"}]\n")
	code, out, errs := brood("workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml")
	var run wf.Result
	if json.Unmarshal([]byte(out), &run) != nil || code != 0 || run.Status != wf.RunDone || run.Usage.Input == 0 {
		t.Fatalf("workflow run --engine temporal: exit %d\n%s\n%s", code, out, errs)
	}
	type entry struct {
		RunID string `json:"run_id"`
		Usage struct{ Input, Output int64 }
		Calls map[string]int
	}
	var shown entry
	if code, out, errs = brood("workflow", "show", run.RunID, "--json"); json.Unmarshal([]byte(out), &shown) != nil || code != 0 {
		t.Fatalf("workflow show --json: exit %d\n%s\n%s", code, out, errs)
	}
	// From the submitter's project (its kept result) and from another
	// (the fleet's record of the run alone).
	other := testbrood.NewProject(t, mainEnv, nil)
	for _, pr := range []*testbrood.Project{sub, other} {
		code, out, errs = pr.Brood(ctx, nil, append([]string{"workflow", "list", "--json"}, fleet...)...)
		var list []entry
		if json.Unmarshal([]byte(out), &list) != nil || code != 0 {
			t.Fatalf("workflow list --json: exit %d\n%s\n%s", code, out, errs)
		}
		i := slices.IndexFunc(list, func(e entry) bool { return e.RunID == run.RunID })
		if i < 0 || list[i].Usage != shown.Usage || shown.Usage.Input != run.Usage.Input || list[i].Calls["done"] != 2 {
			t.Errorf("workflow list --json's entry of %s in %s: %+v; want the usage and calls show has: %+v\n%s", run.RunID, pr.Root, list, shown, out)
		}
	}
}

// tagDuration is the duration="…" of a result's tag.
func tagDuration(t *testing.T, text string) time.Duration {
	t.Helper()
	_, v, ok := strings.Cut(text, ` duration="`)
	v, _, _ = strings.Cut(v, `"`)
	d, err := time.ParseDuration(v)
	if !ok || err != nil {
		t.Fatalf("no duration in the result's tag: %v\n%s", err, text)
	}
	return d
}

// TestWrongNamespaceSaysWhatToDo (fleetqa4 P3): a namespace the server
// does not have is said in one line naming the flag, the setting and the
// command that creates it, by the worker, a submitter and a listing alike,
// not as the SDK's bare "Namespace nope is not found".
func TestWrongNamespaceSaysWhatToDo(t *testing.T) {
	srv := devserver.Start(t)
	fleet := []string{"--temporal", srv.Addr, "--namespace", "nope", "--store", "file://" + t.TempDir()}
	sub := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: ns\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"one\"}]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	want := "has no namespace \"nope\": check --namespace or temporal.namespace, or create it with `temporal operator namespace create --namespace nope"
	for _, args := range [][]string{
		{"worker", "--allow-unsigned"},
		{"subagent", "explore", "hi", "--engine", "temporal"},
		{"workflow", "run", "plan.yaml", "--engine", "temporal", "--yes"},
		{"workflow", "list", "--engine", "temporal"},
	} {
		code, out, errs := sub.Brood(ctx, []string{"BROOD_MODEL=script"}, append(args, fleet...)...)
		if code == 0 || !strings.Contains(errs, want) || strings.Contains(errs, "is not found") {
			t.Errorf("brood %s with a namespace the server lacks: exit %d; want one line saying what to do\n%s\n%s", strings.Join(args[:2], " "), code, out, errs)
		}
	}
}

// TestWorkerHelpExamplesRun (fleetqa4 P3): every brood line of `brood
// worker --help`'s examples runs as written (its address the test's dev
// server, ~ the user's home): a worker example that names no trusted key
// exits 2 and starts nothing.
func TestWorkerHelpExamplesRun(t *testing.T) {
	srv := devserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	retention := durationpb.New(24 * time.Hour)
	if _, err := srv.Client(t).WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: "team", WorkflowExecutionRetentionPeriod: retention}); err != nil {
		t.Fatal(err)
	}
	example := worker.NewCmdWorker(&cmdutil.Factory{}, nil).Example
	workers := 0
	for _, line := range strings.Split(example, "\n") {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(line)
		if len(args) < 2 || args[0] != "brood" || args[1] != "worker" {
			continue
		}
		workers++
		pr := workerProject(t, cliScript)
		if code, _, errs := pr.Brood(ctx, nil, "fleet", "keygen"); code != 0 {
			t.Fatalf("brood fleet keygen: exit %d\n%s", code, errs)
		}
		pub, err := os.ReadFile(filepath.Join(pr.Home, ".config", "brood", "fleet", "submitter.pub"))
		if err != nil {
			t.Fatal(err)
		}
		testbrood.WriteFile(t, filepath.Join(pr.Home, "team.keys"), string(pub))
		for i, a := range args[1:] {
			switch {
			case strings.HasSuffix(a, ":7233"):
				a = srv.Addr
			case strings.HasPrefix(a, "~/"):
				a = filepath.Join(pr.Home, a[2:])
			}
			args[i+1] = a
		}
		if !slices.Equal(workerArgs(args[1:]), args[1:]) {
			// The harness would add --allow-unsigned: as written, it
			// names no key and exits 2.
			t.Errorf("the example %q names no trusted key: it cannot start", strings.TrimSpace(line))
			continue
		}
		w := startBrood(t, pr, nil, "brood worker: task queue", args[1:]...)
		w.kill()
	}
	if workers == 0 {
		t.Fatalf("no brood worker line in the examples:\n%s", example)
	}
}
