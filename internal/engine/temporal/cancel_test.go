package temporal_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/workflow"
)

// TestSubmitterCancelStopsTheChild: cancelling the submitter's context
// (Ctrl-C of brood workflow run) cancels the run on the fleet; the running
// call hears it through its heartbeat and its child is stopped, recorded
// cancelled on the worker; the run ends cancelled.
func TestSubmitterCancelStopsTheChild(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	w := startWorker(t, c, q, enginetest.Script, 2, &temporal.DirStore{Dir: t.TempDir()})
	eng := newEngine(c, q)
	p := enginetest.Plan(t, "name: stopped\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"wait forever\"}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res *workflow.Result
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err = eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml", Events: func(e workflow.Event) {
			if e.Running > 0 {
				cancel()
			}
		}})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the cancelled run did not end")
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunCancelled {
		t.Fatalf("status %s; want cancelled", res.Status)
	}
	id := res.Phases[0].Calls[0].TaskID
	var r dispatch.Result
	b, err := os.ReadFile(filepath.Join(w.root, ".brood", "dispatch", id, "result.json"))
	if err != nil || json.Unmarshal(b, &r) != nil || r.Status != dispatch.StatusCancelled {
		t.Fatalf("the child's record on the worker: %s (%v); want it cancelled", b, err)
	}
}
