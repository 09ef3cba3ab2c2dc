package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

// TestTwoWorkersShareAQueue: two workers of --concurrency 2 on one queue
// run a plan of 8 calls: never more than 2 at once on either (4 in all),
// both take calls, and every child runs at depth 1 under the cap.
func TestTwoWorkersShareAQueue(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	a := startWorkerProc(t, srv.Addr, q, slowScript, store, 2)
	b := startWorkerProc(t, srv.Addr, q, slowScript, store, 2)
	eng := newEngine(c, q)
	var calls []string
	for i := 0; i < 8; i++ {
		calls = append(calls, fmt.Sprintf(`{agent: explore, prompt: "slow %d"}`, i))
	}
	p := enginetest.Plan(t, "name: shared\nphases:\n  - id: p\n    parallel: ["+strings.Join(calls, ", ")+"]\n")
	ids := make(chan string, 1)
	done := make(chan error, 1)
	var res *workflow.Result
	go func() {
		var err error
		res, err = eng.Run(context.Background(), engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(id string) { ids <- id }})
		done <- err
	}()
	id := <-ids
	peak := map[string]int{}
	peakAll := 0
	var err error
	deadline := time.After(3 * time.Minute)
	for finished := false; !finished; {
		select {
		case err = <-done:
			finished = true
		case <-time.After(100 * time.Millisecond):
			per := map[string]int{}
			n := 0
			for _, pc := range pending(t, c, id) {
				if pc.Started {
					per[pc.Worker]++
					n++
				}
			}
			for w, k := range per {
				peak[w] = max(peak[w], k)
			}
			peakAll = max(peakAll, n)
		case <-deadline:
			t.Fatal("the run did not finish")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunDone || res.Agents != 8 {
		t.Fatalf("status %s agents %d", res.Status, res.Agents)
	}
	for w, k := range peak {
		if k > 2 {
			t.Errorf("worker %s ran %d calls at once; its concurrency is 2", w, k)
		}
	}
	if peakAll < 2 || len(peak) < 2 {
		t.Errorf("peak %v per worker, %d in all: the calls never ran side by side on both workers", peak, peakAll)
	}
	if peakAll > 4 {
		t.Errorf("%d calls ran at once on two workers of 2", peakAll)
	}
	na, nb := len(a.taskDirs()), len(b.taskDirs())
	if na == 0 || nb == 0 || na+nb != 8 {
		t.Errorf("calls per worker: %d and %d; want both used, 8 in all", na, nb)
	}
	for _, w := range []*workerProc{a, b} {
		for tid := range w.taskDirs() {
			var env dispatch.Envelope
			b, err := os.ReadFile(filepath.Join(w.p.root, ".brood", "dispatch", tid, "envelope.json"))
			if err != nil || json.Unmarshal(b, &env) != nil {
				t.Fatalf("task %s: envelope: %v", tid, err)
			}
			if env.Depth != 1 || env.MaxDepth != 1 {
				t.Errorf("task %s at depth %d of %d; want 1 of 1 (the worker is its root)", tid, env.Depth, env.MaxDepth)
			}
		}
	}
	t.Logf("peak calls at once: %v per worker, %d in all", peak, peakAll)
}
