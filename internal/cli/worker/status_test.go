package worker_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestFleetCallStatusIsTrue (issue 26, items 3 and 8): a call no worker
// polls for says so (not "running"); once a worker has run it, `brood
// tasks show` takes a prefix or a tail of its id and names the worker
// and the attempts.
func TestFleetCallStatusIsTrue(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("status-%d", os.Getpid())
	store := "file://" + t.TempDir()
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", store}
	sub := testbrood.NewProject(t, mainEnv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	blobs, err := blobstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	c, err := temporal.Dial(ctx, temporal.ClientOptions{HostPort: srv.Addr, ClaimStore: blobs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := dispatch.NewID()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + id, TaskQueue: queue}, temporal.CallWorkflowName,
		temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "answer yes", TaskID: id}, Queue: queue,
			Limits: temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	show := func(q string) string {
		t.Helper()
		code, out, errs := sub.Brood(ctx, nil, append([]string{"tasks", "show", q}, fleet...)...)
		if code != 0 {
			t.Fatalf("tasks show %s: exit %d\n%s\n%s", q, code, out, errs)
		}
		return out
	}
	if out := show(id); !strings.Contains(out, "status   queued (no worker is polling task queue "+queue+")") {
		t.Fatalf("tasks show of a call no worker polls for:\n%s", out)
	}
	w := startBrood(t, workerProject(t, cliScript), nil, "brood worker: task queue",
		append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	var res temporal.CallOutput
	if err := run.Get(ctx, &res); err != nil || res.Status != dispatch.StatusDone {
		t.Fatalf("the call: %v %+v\n%s", err, res.Result, w.log())
	}
	for _, q := range []string{id[:16], strings.ToLower(id[len(id)-8:])} {
		out := show(q)
		if !strings.Contains(out, "task     "+id) || !strings.Contains(out, "status   done") ||
			!strings.Contains(out, "worker   ") || !strings.Contains(out, "(ran it; 1 attempt(s) on the fleet)") {
			t.Fatalf("tasks show %s of a finished fleet call (want its id, the worker and 1 attempt):\n%s", q, out)
		}
	}
	if code, _, errs := sub.Brood(ctx, nil, append([]string{"tasks", "show", "ZZZZZZZZ"}, fleet...)...); code == 0 || !strings.Contains(errs, "ZZZZZZZZ") {
		t.Fatalf("tasks show of an id nothing has: exit %d\n%s", code, errs)
	}
}
