package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestKilledWorkersCallContinuesOnlyOnAWorkerThatTrustsIt: two workers,
// each with a key of its own. When they trust each other (each lists the
// other's public key in its trusted_workers), a call whose worker is
// killed between turns continues on the other from the transcript the
// first one signed, and no finished turn is asked again. When they do not,
// the other starts the call over from its signed brief (the first turn is
// asked again) and the result says why.
func TestKilledWorkersCallContinuesOnlyOnAWorkerThatTrustsIt(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	for _, tc := range []struct {
		name  string
		trust bool
	}{
		{"trusted", true},
		{"untrusted", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			store := "file://" + t.TempDir()
			m := newTurnModel(t, 2)
			homes := [2]string{t.TempDir(), t.TempDir()}
			pubs := [2]string{testbrood.WorkerKey(t, homes[0], 11), testbrood.WorkerKey(t, homes[1], 12)}
			if tc.trust {
				for i, home := range homes {
					file := filepath.Join(temporal.KeyDir(home), temporal.TrustedWorkersFile)
					if err := os.WriteFile(file, []byte(pubs[1-i]+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			var workers [2]*workerProc
			for i := range workers {
				workers[i] = startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", append(m.env(), "HOME="+homes[i])...)
			}
			eng := newEngine(c, q)
			desc := "worker trust " + tc.name
			k := turnKey{desc, 1}
			m.hold(k)
			id := dispatch.NewID()
			done := make(chan callOut, 1)
			go func() {
				r, err := eng.Call(context.Background(), call.Spec{TaskID: id, Agent: "explore", Prompt: "count the files", Description: desc})
				done <- callOut{r, err}
			}()
			select {
			case <-m.arrivedAt(k):
			case o := <-done:
				t.Fatalf("the call ended before turn 1 was asked: %+v, %v", o.r, o.err)
			case <-time.After(2 * time.Minute):
				t.Fatal("turn 1 of the call was never asked")
			}
			victim := -1
			for i, w := range workers {
				if w.taskDirs()[id] {
					victim = i
				}
			}
			if victim < 0 {
				t.Fatalf("task %s is on neither worker", id)
			}
			workers[victim].kill()
			m.release(k)
			var o callOut
			select {
			case o = <-done:
			case <-time.After(3 * time.Minute):
				t.Fatal("the call did not finish after its worker was killed")
			}
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.r.Status != dispatch.StatusDone || !strings.Contains(o.r.Summary, "finished after 2 tool turns") || o.r.TaskID != id {
				t.Fatalf("result %+v; want task %s done with the model's last answer", o.r, id)
			}
			const over = "attempt 2 started over: attempt 1's transcript was signed by worker key "
			if tc.trust {
				m.checkAskedOnce(t, desc, 1)
				if strings.Contains(o.r.Text, "started over") {
					t.Errorf("the result says the call started over, though the workers trust each other:\n%s", o.r.Text)
				}
				return
			}
			if n := m.askedN(turnKey{desc, 0}); n != 2 {
				t.Errorf("the first turn was asked %d time(s); want 2 (the call started over on a worker that does not trust the first)", n)
			}
			if !strings.Contains(o.r.Text, over) || !strings.Contains(o.r.Text, "which is not in this worker's trusted_workers") {
				t.Errorf("the result does not say the call started over, and why:\n%s\nwant %q", o.r.Text, over)
			}
		})
	}
}
