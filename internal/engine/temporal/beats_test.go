package temporal_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/workflow"
)

// rpcCount counts a client's RPCs to the server by method.
type rpcCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *rpcCount) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	r.mu.Lock()
	r.n[path.Base(method)]++
	r.mu.Unlock()
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (r *rpcCount) get(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[method]
}

// countingClient is a client of addr whose RPCs are counted.
func countingClient(t testing.TB, addr string) (client.Client, *rpcCount) {
	t.Helper()
	r := &rpcCount{n: map[string]int{}}
	return interceptedClient(t, addr, r.intercept), r
}

// TestOneHeartbeatPerShortCall: the server's writes for a call's
// heartbeats. A call shorter than the worker's heartbeat interval (the
// production one: the child's ping interval, 5s; a minute here, for a
// loaded machine) sends no liveness beat (the attempt's start is one), no
// second write for a durable beat (the SDK's own), and no result
// heartbeat: its final answer's turn names its whole transcript, and a
// retry continues from that transcript, which ends with the answer, and
// asks the model nothing
// (TestKilledWorkerBeforeItsResultNeverAsksTheLastTurnAgain). On a signed
// fleet (worker keys, a store that creates only where none is) that turn
// is named in the store, signed, and the call sends no heartbeat at all
// (answername.go); without keys it is its one heartbeat.
func TestOneHeartbeatPerShortCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		signed bool
		want   int // heartbeats a call
	}{
		{"unsigned: the answer's heartbeat", false, 1},
		{"signed: the answer named in the store", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const k = 6
			got, named := shortCallBeats(t, k, tc.signed)
			if got != tc.want*k {
				t.Errorf("%d heartbeat RPCs for %d calls; want %d a call", got, k, tc.want)
			}
			if want := map[bool]int{true: k}[tc.signed]; named != want {
				t.Errorf("%d answers named in the store for %d calls; want %d", named, k, want)
			}
		})
	}
}

// shortCallBeats runs k short calls on one worker (signed: a signed
// fleet) and returns the heartbeat RPCs its client sent and how many
// answers it named in the store.
func shortCallBeats(t *testing.T, k int, signed bool) (beats, named int) {
	srv := sharedServer(t)
	c, n := countingClient(t, srv.Addr)
	q := newQueue(t)
	dir := t.TempDir()
	var store temporal.Store = &temporal.DirStore{Dir: dir}
	var keys *benchKeys
	if signed {
		blobs, err := blobstore.Open(t.Context(), "file://"+dir)
		if err != nil {
			t.Fatal(err)
		}
		store, keys = blobs, newBenchKeys(t, 1)
	}
	sig := keys.worker(0)
	p := newProject(t, fleetScript(0))
	w := temporal.NewWorker(c, temporal.WorkerOptions{
		Queue: q, Concurrency: 3, Heartbeat: time.Minute, StopTimeout: 5 * time.Second,
		Activities: &temporal.Activities{Runner: p.dispatcher(t, 3), ProjectRoot: p.root, Store: store, Worker: "test-" + filepath.Base(p.root), UploadEvery: 100 * time.Millisecond,
			Trust: sig.trust, Keys: sig.keys},
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	limits := testLimits
	limits.Heartbeat = 2 * time.Minute // the attempt's own beats before its child speaks: every 40s
	cfg := temporal.Config{Client: srv.Client(t), Queue: q, Poll: 50 * time.Millisecond,
		Limits: func(string) temporal.CallLimits { return limits }}
	if signed {
		cfg.Signer, cfg.Store, cfg.Workers = keys.submitter, store, temporal.NewResultTrust(keys.peers, "test")
	}
	eng := temporal.New(cfg)
	var calls []string
	for i := range k {
		calls = append(calls, fmt.Sprintf(`{agent: explore, prompt: "item %d"}`, i))
	}
	plan := enginetest.Plan(t, "name: beats\nphases:\n  - id: p\n    parallel: ["+strings.Join(calls, ", ")+"]\n")
	res, err := eng.Run(context.Background(), engine.RunRequest{Plan: plan, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunDone || res.Agents != k {
		t.Fatalf("status %s, %d agents; want done with %d", res.Status, res.Agents, k)
	}
	runs, _ := os.ReadDir(filepath.Join(dir, "fleet", "answers"))
	for _, r := range runs {
		answers, _ := os.ReadDir(filepath.Join(dir, "fleet", "answers", r.Name()))
		named += len(answers)
	}
	return n.get("RecordActivityTaskHeartbeat"), named
}
