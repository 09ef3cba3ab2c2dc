package temporal_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
	"github.com/broodhq/brood/internal/workflow"
)

// TestKilledSubmitterResumeAsksNothingAgain: the submitting `brood workflow
// run --engine temporal` is killed (SIGKILL) while the plan's second call
// waits for the model; `brood workflow resume RUN_ID` from the same
// checkout attaches to the run, which went on on the fleet, and prints its
// result. The model saw every turn of both calls once, and the submitter's
// project keeps the run's journal and result as a local run's.
func TestKilledSubmitterResumeAsksNothingAgain(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), `
name: dead submitter
phases:
  - id: first
    parallel: [{agent: explore, prompt: "first"}]
  - id: second
    parallel: [{agent: explore, prompt: "second"}]
`)
	testbrood.WriteFile(t, filepath.Join(sub.Root, ".brood", "settings.toml"), "[pool]\nheartbeat_timeout = \"3s\"\nping_interval = \"100ms\"\nkill_grace = \"2s\"\n")
	fleet := []string{"--temporal", srv.Addr, "--task-queue", q, "--store", store}
	k := turnKey{"dead submitter: second", 1}
	m.hold(k)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := exec.Command(exe, append([]string{"workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml"}, fleet...)...)
	run.Dir, run.Env = sub.Root, sub.Env
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- run.Wait() }()
	t.Cleanup(func() { _ = run.Process.Kill() })
	select {
	case <-m.arrivedAt(k):
	case err := <-ended:
		t.Fatalf("the submitter exited before the second call's second turn: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the second call's second turn was never asked")
	}
	_ = run.Process.Kill()
	<-ended
	runs, err := newEngine(c, q).List(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs on the queue: %+v, %v; want the one", runs, err)
	}
	id := runs[0].RunID
	m.release(k)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	code, out, errs := sub.Brood(ctx, nil, append([]string{"workflow", "resume", id, "--json"}, fleet...)...)
	var res workflow.Result
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Status != workflow.RunDone || res.Agents != 2 {
		t.Fatalf("workflow resume: exit %d\n%s\n%s", code, out, errs)
	}
	m.checkAskedOnce(t, "dead submitter: first", -1)
	m.checkAskedOnce(t, "dead submitter: second", -1)
	dir := filepath.Join(sub.Root, ".brood", "workflows", id)
	lines, err := workflow.ReadJournal(filepath.Join(dir, workflow.JournalFile))
	if _, done, _, open := workflow.Summary(lines); err != nil || done != 2 || open != 0 {
		t.Errorf("the submitter's journal of the run: %d done, %d open, %v; want both calls done", done, open, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err != nil {
		t.Errorf("the submitter's result.json of the run: %v", err)
	}
}
