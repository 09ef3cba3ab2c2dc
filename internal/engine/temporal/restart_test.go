package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/workflow"
)

// slowScript answers after a delay the test can see running.
const slowScript = `
agents:
  explore:
    - cases:
        - if: "slow"
          say: "slow done"
          delay: 2s
      say: "plain answer"
`

// TestServerRestartMidRun: kill the server (SIGKILL) while a call runs and
// start it again on its state file; the run completes with every result.
func TestServerRestartMidRun(t *testing.T) {
	srv := devserver.Start(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProc(t, srv.Addr, q, slowScript, store, 2)
	eng := newEngine(c, q)
	p := enginetest.Plan(t, `
name: restarted
phases:
  - id: a
    parallel: [{agent: explore, prompt: "slow one"}, {agent: explore, prompt: "slow two"}]
  - id: b
    parallel: [{agent: explore, prompt: "after"}]
`)
	ids := make(chan string, 1)
	type out struct {
		res *workflow.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := eng.Run(context.Background(), engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(id string) { ids <- id }})
		done <- out{res, err}
	}()
	id := <-ids
	waitFor(t, "a running call", 60*time.Second, func() bool { return len(pending(t, c, id)) > 0 })
	srv.Restart()
	var o out
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the run did not finish after the server restarted")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.Status != workflow.RunDone || o.res.Agents != 3 {
		t.Fatalf("status %s agents %d; want done with 3: %+v", o.res.Status, o.res.Agents, o.res.Phases)
	}
	a, _ := o.res.Outputs["a"].([]any)
	if len(a) != 2 || a[0] != "slow done" || a[1] != "slow done" {
		t.Fatalf("outputs of a: %#v", o.res.Outputs["a"])
	}
	if st, err := os.Stat(filepath.Clean(srv.DB)); err != nil || st.Size() == 0 {
		t.Fatalf("the server kept no state in %s: %v", srv.DB, err)
	}
}
