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

	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestExamplePlanSurvivesAKilledWorker runs examples/workflows/
// review-packages.yaml with --engine temporal on two local workers that
// trust the submitter's key, and kills one (SIGKILL) while it reviews a
// package: the run finishes done, with every review (the other worker
// admits the killed call's retry: its task is one the signed run named,
// its transcript that task's).
func TestExamplePlanSurvivesAKilledWorker(t *testing.T) {
	srv := devserver.Start(t)
	dir := filepath.Join("..", "..", "..", "examples", "workflows")
	plan, err := os.ReadFile(filepath.Join(dir, "review-packages.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(dir, "review-packages.script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The example's script, with each review taking a moment: long enough
	// to kill a worker in the middle of one.
	slow := strings.Replace(string(script), "      say: |\n        ```json\n        {\"package\"", "      delay: 1500ms\n      say: |\n        ```json\n        {\"package\"", 1)
	if slow == string(script) {
		t.Fatal("the example script changed shape; update this test's delay")
	}
	store := "file://" + t.TempDir()
	queue := fmt.Sprintf("example-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", store}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sub := testbrood.NewProject(t, mainEnv, nil)
	if code, _, errs := sub.Brood(ctx, nil, "fleet", "keygen"); code != 0 {
		t.Fatalf("brood fleet keygen: exit %d\n%s", code, errs)
	}
	pub := filepath.Join(temporal.KeyDir(sub.Home), temporal.PublicKeyFile)
	a, b := workerProject(t, slow), workerProject(t, slow)
	wa := startBrood(t, a, nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "2", "--trusted-key", pub}, fleet...)...)
	wb := startBrood(t, b, nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "2", "--trusted-key", pub}, fleet...)...)

	testbrood.WriteFile(t, filepath.Join(sub.Root, "review-packages.yaml"), string(plan))
	// The submitter's lifeguard is the calls' heartbeat timeout: a dead
	// worker's call moves on after 3s of silence.
	testbrood.WriteFile(t, filepath.Join(sub.Root, ".brood", "settings.toml"), "[pool]\nheartbeat_timeout = \"3s\"\nping_interval = \"100ms\"\nkill_grace = \"2s\"\n")
	type out struct {
		code     int
		out, err string
	}
	done := make(chan out, 1)
	go func() {
		code, o, e := sub.Brood(ctx, nil, append([]string{"workflow", "run", "--engine", "temporal", "--yes", "--json", "review-packages.yaml"}, fleet...)...)
		done <- out{code, o, e}
	}()
	// Kill the first worker seen with a review in flight (a task beyond
	// the listing that has no result yet).
	inFlight := func(pr *testbrood.Project) bool {
		for _, id := range tasks(pr) {
			if _, err := os.Stat(filepath.Join(pr.Root, ".brood", "dispatch", id, "result.json")); err != nil {
				return true
			}
		}
		return false
	}
	var victim *proc
	deadline := time.Now().Add(2 * time.Minute)
	for victim == nil {
		if len(tasks(a))+len(tasks(b)) >= 2 {
			switch {
			case inFlight(a):
				victim = wa
			case inFlight(b):
				victim = wb
			}
		}
		if victim == nil && time.Now().After(deadline) {
			t.Fatal("no review started on either worker")
		}
		time.Sleep(10 * time.Millisecond) // polling the workers' task directories, with a deadline
	}
	victim.kill()
	o := <-done
	var res wf.Result
	if err := json.Unmarshal([]byte(o.out), &res); err != nil || o.code != 0 || res.Status != wf.RunDone {
		t.Fatalf("exit %d, status %s (%s)\nstdout: %s\nstderr: %s", o.code, res.Status, res.Reason, o.out, o.err)
	}
	var review wf.PhaseResult
	for _, ph := range res.Phases {
		if ph.ID == "review" {
			review = ph
		}
	}
	outs, _ := review.Output.([]any)
	if len(outs) != 3 || res.Agents != 5 {
		t.Fatalf("reviews %s, %d agents; want 3 reviews and 5 agents", js(review.Output), res.Agents)
	}
	for i, v := range outs {
		if v == nil {
			t.Fatalf("review %d has no result: %+v", i, review.Calls)
		}
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
