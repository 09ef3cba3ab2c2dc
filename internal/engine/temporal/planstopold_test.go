package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// boundStops is the workflow change of a run whose workflow checks a
// stopped call's heartbeat against the input it scheduled.
const boundStops = "brood.plan.bound-stops"

// TestOldRunsStoppedCallsStartOver (review30 P2-1): a run started and run
// by a brood from before bound stops (its start requires no bound-stops
// marker, its workflow records none, so it keeps any stopped call's
// heartbeat) is cancelled while its writer call's heartbeat carries the
// call's conversation and change, and resumed by this brood on another
// worker than the one that ran the call (which has no record of it to
// compare). The resume hands on none of its stopped calls: each starts
// over from its brief, and the resume says so in one line. Re-briefed by
// the old run's completer (ALPHA -> BETA), neither the BETA conversation
// nor its change (evil.txt) reaches the user's tree; honest, the run is
// done all the same, its call answering its own brief.
func TestOldRunsStoppedCallsStartOver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rebrief bool
	}{
		{"honest", false},
		{"re-briefed by the old run's completer", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dir := stopAndResume(t, stopRun{rebrief: tc.rebrief, old: true})
			b, _ := json.Marshal(got.Phases)
			if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
				t.Errorf("the re-briefed (BETA) call's change evil.txt is in the user's tree after the resume (%s, landed %q)", got.Status, got.Landed)
			}
			if strings.Contains(string(b), "BETA") {
				t.Errorf("the resumed call continued the re-briefed BETA conversation: %s", b)
			}
			if got.Status != wf.RunDone || len(got.Phases) != 1 || len(got.Phases[0].Calls) != 1 || got.Phases[0].Calls[0].Status != call.StatusDone {
				t.Fatalf("resumed %s (%s); phases %s; want the one call done", got.Status, got.Reason, b)
			}
			if out := fmt.Sprint(got.Phases[0].Calls[0].Output); !strings.HasPrefix(out, "DONE turn 2 first user [Begin: p: ALPHA") {
				t.Errorf("the resumed call said %q; want it started over from its ALPHA brief", out)
			}
			if want := "1 stopped call(s) are from before brood checked stopped calls' briefs: they start over"; !strings.Contains(got.Reason, want) {
				t.Errorf("the resume says %q; want %q", got.Reason, want)
			}
			if f, err := os.ReadFile(filepath.Join(dir, "ok.txt")); err != nil || string(f) != "alpha\n" {
				t.Errorf("ok.txt = %q, %v; want the ALPHA brief's write landed (landed %q)", f, err, got.Landed)
			}
		})
	}
}

// oldRun is the workflow context's mark of a run an old submitter
// started (standInOld).
type oldRun struct{}

// standInOld polls name with brood's own plan workflow, its calls on q:
// a run whose start requires no bound-stops marker it runs as an old
// brood's workflow did (no marker recorded: its stopped calls' heartbeats
// kept unchecked); rebrief: it re-briefs the run's first execution's call.
func standInOld(t *testing.T, name, q string, rebrief bool) {
	t.Helper()
	out := func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
		return &oldStandIn{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}, rebrief: rebrief}
	}
	sw := sdkworker.New(sharedServer(t).Client(t), name, sdkworker.Options{Interceptors: []interceptor.WorkerInterceptor{&rewriter{out: out}}})
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		if _, ok := in.Versions[boundStops]; !ok {
			w = workflow.WithValue(w, oldRun{}, true)
		}
		in.Queue = q
		return temporal.PlanWorkflow(w, in)
	}, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Stop)
}

type oldStandIn struct {
	interceptor.WorkflowOutboundInterceptorBase
	rebrief bool
}

func (o *oldStandIn) GetVersion(ctx workflow.Context, change string, lo, hi workflow.Version) workflow.Version {
	if change == boundStops && ctx.Value(oldRun{}) != nil {
		return workflow.DefaultVersion // an old brood's code: no marker recorded
	}
	return o.Next.GetVersion(ctx, change, lo, hi)
}

func (o *oldStandIn) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if !o.rebrief {
		return o.Next.ExecuteActivity(ctx, typ, args...)
	}
	return (&reBriefFirst{WorkflowOutboundInterceptorBase: o.WorkflowOutboundInterceptorBase}).ExecuteActivity(ctx, typ, args...)
}

// oldStartEngine is trustingEngine (keyless, trusting the fleet's worker
// key) on q whose first run start is an old submitter's (old): its input
// requires no bound-stops marker.
func oldStartEngine(t *testing.T, q, dir, store string, old bool) *temporal.Engine {
	t.Helper()
	c := sharedServer(t).Client(t)
	if old {
		var err error
		if c, err = client.NewClientFromExisting(c, client.Options{Interceptors: []interceptor.ClientInterceptor{&oldStarts{}}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
	}
	blobs, err := blobstore.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	trust := temporal.NewTrust()
	if err := trust.Add(fleetWorkerPub(), "test"); err != nil {
		t.Fatal(err)
	}
	return temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond,
		Limits:  func(string) temporal.CallLimits { return testLimits },
		Code:    &temporal.CodeConfig{Blobs: blobs, Dir: dir, StateDir: t.TempDir()},
		Workers: temporal.NewResultTrust(trust, "trusted_workers")})
}

// oldStarts makes the first plan run it starts an old submitter's.
type oldStarts struct {
	interceptor.ClientInterceptorBase
	done atomic.Bool
}

func (o *oldStarts) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &oldStartsOut{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, o: o}
}

type oldStartsOut struct {
	interceptor.ClientOutboundInterceptorBase
	o *oldStarts
}

func (c *oldStartsOut) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	if ri, ok := in.Args[0].(temporal.RunInput); ok && !c.o.done.Swap(true) {
		ri.Versions = maps.Clone(ri.Versions)
		delete(ri.Versions, boundStops)
		in.Args = []any{ri}
	}
	return c.Next.ExecuteWorkflow(ctx, in)
}
