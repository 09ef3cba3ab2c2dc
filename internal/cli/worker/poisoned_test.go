package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/isolate"
)

const readScript = `
agents:
  explore:
    - tools: [{Read: {file_path: a.txt}}]
    - say: "the file says: {{result 0}}"
`

// TestPoisonedCacheIsNotUsed is issue 26's second case through a real
// `brood worker`: after a call has cached the base checkout, a file in it
// is overwritten; every later call reads the submitter's true content
// (the checkout is verified by content and rebuilt), never the poison.
func TestPoisonedCacheIsNotUsed(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("poison-%d", os.Getpid())
	store := "file://" + t.TempDir()
	repo := pushedRepo(t)
	origin := filepath.Join(filepath.Dir(repo), "origin.git")
	pr := workerProject(t, readScript)
	if sup := isolate.ProbeIn(t.Context(), pr.Home); !sup.Overlay {
		t.Skipf("no overlay here (%s): full copies are checked out fresh per call, there is no shared checkout to poison", sup.Why)
	}
	startBrood(t, pr, nil, "brood worker: task queue",
		"worker", "--concurrency", "1", "--temporal", srv.Addr, "--task-queue", queue, "--store", store, "--remote", origin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	blobs, err := blobstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := codesnap.Capture(ctx, blobs, repo)
	if err != nil {
		t.Fatal(err)
	}
	c, err := temporal.Dial(ctx, temporal.ClientOptions{HostPort: srv.Addr, ClaimStore: blobs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read := func() string {
		t.Helper()
		id := dispatch.NewID()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + id, TaskQueue: queue}, temporal.CallWorkflowName,
			temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "read a.txt", TaskID: id}, Queue: queue, Code: snap,
				Limits: temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var out temporal.CallOutput
		if err := run.Get(ctx, &out); err != nil {
			t.Fatal(err)
		}
		if out.Status != dispatch.StatusDone {
			t.Fatalf("call %s ended %s: %s", id, out.Status, out.Error)
		}
		return out.Summary
	}
	first := read()
	if !strings.Contains(first, "the file says:") || !strings.Contains(first, "a") {
		t.Fatalf("first call: %q", first)
	}
	trees, _ := filepath.Glob(filepath.Join(pr.Home, ".cache", "brood", "fleet", "trees", "*", "tree", "a.txt"))
	if len(trees) != 1 {
		t.Fatalf("cached base checkouts with a.txt: %v", trees)
	}
	for i := range 3 {
		if err := os.WriteFile(trees[0], []byte(fmt.Sprintf("POISON %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != first {
			t.Fatalf("call %d after the cache was poisoned read %q; the first read %q", i, got, first)
		}
	}
}
