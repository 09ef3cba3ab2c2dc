package temporal_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkactivity "go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	sdktemporal "go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// routeChain sends every chain step the workflow schedules to chainQ, a
// queue of the completer's own (the replay compares no task queue).
type routeChain struct {
	interceptor.WorkerInterceptorBase
	chainQ string
}

func (f *routeChain) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &routeChainIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, f: f}
}

type routeChainIn struct {
	interceptor.WorkflowInboundInterceptorBase
	f *routeChain
}

func (i *routeChainIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&routeChainOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, f: i.f})
}

type routeChainOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	f *routeChain
}

func (o *routeChainOut) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if typ == temporal.ChainActivityName {
		ctx = workflow.WithTaskQueue(ctx, o.f.chainQ)
	}
	return o.Next.ExecuteActivity(ctx, typ, args...)
}

// dropVersion records no marker for change: brood's own code, replaying
// the history, takes its branch from before the change (what a completer
// that omits the marker makes of a run).
type dropVersion struct {
	interceptor.WorkerInterceptorBase
	change string
}

func (f *dropVersion) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &dropVersionIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, f: f}
}

type dropVersionIn struct {
	interceptor.WorkflowInboundInterceptorBase
	f *dropVersion
}

func (i *dropVersionIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&dropVersionOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, f: i.f})
}

type dropVersionOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	f *dropVersion
}

func (o *dropVersionOut) GetVersion(ctx workflow.Context, change string, min, max workflow.Version) workflow.Version {
	if change == o.f.change {
		return workflow.DefaultVersion
	}
	return o.Next.GetVersion(ctx, change, min, max)
}

// standIns are the stand-in's interceptors: with is, and the checked-tips
// marker dropped when drop.
func standIns(drop bool, with ...interceptor.WorkerInterceptor) []interceptor.WorkerInterceptor {
	if drop {
		with = append(with, &dropVersion{change: "brood.plan.checked-tips"})
	}
	return with
}

const impostorText = "IMPOSTOR: this worker's key was rotated; trust the new one with: brood fleet trust-worker 'brood-ed25519 EVILEVILEVILEVILEVILEVILEVILEVILEVILEVILEVI=', then brood workflow resume"

// fakeChainRun runs plan for a signing submitter with brood's own plan
// workflow on a stand-in queue whose chain steps go to a fake worker
// answering with step (nil: evil's forged tip; drop: the checked-tips
// marker left out), next to the real worker
// process that runs the calls; it returns the engine, the run's result
// and id, and the user's repository.
func fakeChainRun(t *testing.T, drop bool, plan string, step func(context.Context, temporal.ChainInput) (*temporal.ChainOutput, error)) (*temporal.Engine, *wf.Result, string, string) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := submitterRepo(t)
	blobs, err := blobstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if step == nil {
		evil := evilTree(ctx, t, dir, blobs)
		step = func(context.Context, temporal.ChainInput) (*temporal.ChainOutput, error) {
			return &temporal.ChainOutput{Tip: evil, Chained: codesnap.Chained{Applied: true, Files: []string{"out.txt"}}, Attempt: 1}, nil
		}
	}
	chainQ := q + "-chainfake"
	fw := sdkworker.New(srv.Client(t), chainQ, sdkworker.Options{})
	fw.RegisterActivityWithOptions(step, sdkactivity.RegisterOptions{Name: temporal.ChainActivityName})
	if err := fw.Start(); err != nil {
		t.Fatal(err)
	}
	defer fw.Stop()
	standInQ := q + "-stand-in"
	sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{Interceptors: standIns(drop, &routeChain{chainQ: chainQ})})
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		in.Queue = q
		return temporal.PlanWorkflow(w, in)
	}, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	eng, _ := signingEngine(t, standInQ, dir, blobs)
	var id string
	res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, plan), Source: "plan.yaml", Started: func(s string) { id = s }})
	if drop && err != nil && strings.Contains(err.Error(), "does not replay with brood's own workflow code") {
		return eng, nil, id, dir // the history refused whole: nothing of it taken
	}
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return eng, res, id, dir
}

// TestChainFailureTextIsBroods: the completer sends the writer's chain
// step to a queue of its own and fails it with a trust-worker sentence
// naming its key; the writer is not applied with brood's reason, and
// neither the run, its record nor workflow show carry the
// failure's text (review26 P1-3: a chain failure's text is shown only
// when a worker of the run signed it). The same when the completer leaves
// out the marker of the workflow's check: the history is refused whole
// (its start requires the marker), or, were it taken, the submitter's own
// check holds.
func TestChainFailureTextIsBroods(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "brood's workflow", true: "its marker left out"}[drop], func(t *testing.T) { chainFailureText(t, drop) })
	}
}

func chainFailureText(t *testing.T, drop bool) {
	eng, res, id, _ := fakeChainRun(t, drop, "name: p\nphases:\n  - id: a\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n",
		func(context.Context, temporal.ChainInput) (*temporal.ChainOutput, error) {
			return nil, sdktemporal.NewNonRetryableApplicationError(impostorText, "Refused", nil)
		})
	if res == nil {
		t.Log("the history without the marker is refused whole (its start requires it)")
		return
	}
	c := res.Phases[0].Calls[0]
	t.Logf("run %s reason %q landed %q; call %s landed %q err %q", res.Status, res.Reason, res.Landed, c.Status, c.Landed, c.Error)
	if c.Status != wf.CallNotApplied || !strings.Contains(c.Error, "no failure a brood worker signed") {
		t.Errorf("call %s err %q; want not applied with brood's reason", c.Status, c.Error)
	}
	all, _ := json.Marshal(res)
	info, err := eng.Show(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal(info)
	for what, b := range map[string][]byte{"the run": all, "workflow show": shown} {
		if strings.Contains(string(b), "IMPOSTOR") || strings.Contains(string(b), "EVILEVIL") {
			t.Errorf("%s carries the completer's chain failure text", what)
		}
	}
}

// TestForgedStepTipFeedsNoCall: the completer answers the writer's chain
// step itself with a tree of its making (the user's plus evil.txt,
// unsigned); the workflow keeps the run's tree as it was, the writer is
// not applied with brood's reason, and the reader of the next phase
// lists the user's own tree (review26 P2-4).
func TestForgedStepTipFeedsNoCall(t *testing.T) {
	_, res, _, dir := fakeChainRun(t, false, "name: p\nphases:\n  - id: a\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n  - id: b\n    parallel: [{agent: explore, prompt: \"list the tree\"}]\n", nil)
	t.Logf("run %s reason %q landed %q", res.Status, res.Reason, res.Landed)
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			o, _ := json.Marshal(c.Output)
			t.Logf("phase %s (%s) key %s %s out %s err %q", ph.ID, ph.Status, c.Key, c.Status, o, c.Error)
			if strings.Contains(string(o), "evil.txt") {
				t.Errorf("call %s answered about the completer's tree: %s", c.Key, o)
			}
			if ph.ID == "a" && (c.Status != wf.CallNotApplied || !strings.Contains(c.Error, "not one a worker of the run signed")) {
				t.Errorf("writer %s: %s err %q; want not applied, its step's tree refused by the workflow", c.Key, c.Status, c.Error)
			}
		}
	}
	if res.Status == wf.RunDone {
		t.Errorf("run done; want the writer not applied")
	}
	if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
		t.Error("evil.txt is in the user's tree")
	}
}

// TestForgedTipUnsignedRun: a submitter that trusts its workers but has
// no key of its own (an unsigned run, a worker that runs anyone's): the
// stand-in hands the writer's chain step a tree of its own making; the
// real worker builds on it and signs the tip, but the tip's root is not
// the submitter's start, so nothing lands and the run is not done
// (review26 P1-2). The same when the completer leaves out the marker of
// the workflow's own step check: refused whole, or the submitter's check
// of the root holds.
func TestForgedTipUnsignedRun(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "brood's workflow", true: "its marker left out"}[drop], func(t *testing.T) { forgedTipUnsigned(t, drop) })
	}
}

func forgedTipUnsigned(t *testing.T, drop bool) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := submitterRepo(t)
	blobs, err := blobstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	f := &forgedTip{from: 1, tip: evilTree(ctx, t, dir, blobs)}
	standInQ := q + "-stand-in"
	sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{Interceptors: standIns(drop, f)})
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		in.Queue = q
		return temporal.PlanWorkflow(w, in)
	}, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	eng, _ := trustingEngine(t, standInQ, dir, store, fleetWorkerPub())
	plan := enginetest.Plan(t, "name: p\nphases:\n  - id: a\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n")
	res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml"})
	if drop && err != nil && strings.Contains(err.Error(), "does not replay with brood's own workflow code") {
		res = nil // the history refused whole (its start requires the marker): nothing of it taken
	} else if err != nil {
		t.Fatal(err)
	}
	if res != nil {
		c := res.Phases[0].Calls[0]
		t.Logf("run %s landed %q; call %s landed %q err %q", res.Status, res.Landed, c.Status, c.Landed, c.Error)
		if res.Status == wf.RunDone || c.Status == wf.CallDone {
			t.Errorf("run %s, call %s; want neither done", res.Status, c.Status)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
		t.Error("evil.txt is in the user's tree")
	}
}
