package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/workflow"
)

const prioScript = `
agents:
  explore:
    - say: "low done"
      delay: 300ms
  plan:
    - say: "high done"
      delay: 300ms
`

// TestPriorityOrdersTheQueue: on a worker that takes one call at a time,
// calls of a high-priority agent (key 1) queued behind low ones (key 5)
// run first.
func TestPriorityOrdersTheQueue(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	w := startWorkerProc(t, srv.Addr, q, prioScript, "file://"+t.TempDir(), 1)
	eng := temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond,
		Limits: func(agent string) temporal.CallLimits {
			l := testLimits
			l.Priority = 5
			if agent == "plan" {
				l.Priority = 1
			}
			return l
		}})
	var calls []string
	for i := 0; i < 4; i++ {
		calls = append(calls, fmt.Sprintf(`{agent: explore, prompt: "low %d"}`, i))
	}
	for i := 0; i < 4; i++ {
		calls = append(calls, fmt.Sprintf(`{agent: plan, prompt: "high %d"}`, i))
	}
	p := enginetest.Plan(t, "name: prio\nphases:\n  - id: p\n    parallel: ["+strings.Join(calls, ", ")+"]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunDone {
		t.Fatalf("status %s: %+v", res.Status, res.Phases)
	}
	type started struct {
		agent string
		at    time.Time
	}
	var order []started
	for _, ph := range res.Phases {
		for _, cr := range ph.Calls {
			b, err := os.ReadFile(filepath.Join(w.p.root, ".brood", "dispatch", cr.TaskID, "output.json"))
			var o dispatch.Output
			if err != nil || json.Unmarshal(b, &o) != nil {
				t.Fatalf("task %s: output.json: %v", cr.TaskID, err)
			}
			order = append(order, started{cr.Agent, o.Started})
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i].at.Before(order[j].at) })
	var seq []string
	for _, s := range order {
		seq = append(seq, s.agent)
	}
	// The first call may start before the rest are queued; after it, every
	// high-priority call runs before any low one still waiting.
	rest := seq[1:]
	lastHigh, firstLow := -1, len(rest)
	for i, a := range rest {
		if a == "plan" {
			lastHigh = i
		} else if i < firstLow {
			firstLow = i
		}
	}
	if lastHigh > firstLow {
		t.Fatalf("start order %v: a low-priority call ran before a queued high-priority one", seq)
	}
	t.Logf("start order %v", seq)
}
