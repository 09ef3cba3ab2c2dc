package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestCtrlCWithNoWorkerReturnsAtOnce (issue 26, P3): the queue's only
// worker has stopped (the server still lists its pollers for minutes), so
// nothing takes a submission. Ctrl-C of `brood workflow run --engine
// temporal` and of `brood subagent --engine temporal` returns within a few
// seconds (it took 15 s and up to 2 min), saying that none of the calls
// runs, that no worker has taken the cancel, and how to end the run.
func TestCtrlCWithNoWorkerReturnsAtOnce(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("ctrlc-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	w := startBrood(t, workerProject(t, cliScript), nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The worker has polled for both kinds of task, then stops.
	if code, out, errs := sub.Brood(ctx, nil, append([]string{"subagent", "explore", "answer yes", "--engine", "temporal"}, fleet...)...); code != 0 {
		t.Fatalf("a call while the worker was up: exit %d\n%s\n%s", code, out, errs)
	}
	w.kill()
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: nobody\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"answer yes\"}]\n")
	for _, args := range [][]string{
		{"workflow", "run", "plan.yaml", "--engine", "temporal", "--yes"},
		{"subagent", "explore", "answer yes", "--engine", "temporal"},
	} {
		p := startBrood(t, sub, nil, "", append(args, fleet...)...)
		waitCLI(t, "brood "+args[0]+" to say it is queued", func() bool { return strings.Contains(p.log(), "queued (") })
		asked := time.Now()
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.end:
		case <-time.After(2 * time.Minute):
			t.Fatalf("brood %s still waits 2 min after Ctrl-C\n%s", args[0], p.log())
		}
		took := time.Since(asked)
		out := p.log()
		t.Logf("brood %s returned %v after Ctrl-C:\n%s", args[0], took.Round(time.Millisecond), out)
		if took > 8*time.Second || !strings.Contains(out, "none of its calls runs") || !strings.Contains(out, "to end it") ||
			!strings.Contains(out, "temporal workflow terminate --workflow-id") {
			t.Errorf("brood %s returned %v after Ctrl-C; want within seconds, saying how the run ends:\n%s", args[0], took.Round(time.Millisecond), out)
		}
	}
}
