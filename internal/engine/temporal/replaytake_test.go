package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	sdktemporal "go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// notReplayed is what a submitter says of a run or call whose history
// does not replay with brood's own workflow code (histreplay.go).
const notReplayed = "does not replay with brood's own workflow code"

// wantReplayRefused runs plan on eng, whose workflow a stand-in completes
// with commands of its own: the run is refused whole, in one line that
// says its history does not replay and carries nothing of the stand-in's
// (IMPOSTOR); nothing is kept under root (when set); workflow show says
// failed, for the same reason. It returns the run's id.
func wantReplayRefused(ctx context.Context, t *testing.T, eng *temporal.Engine, req engine.RunRequest, root string) string {
	t.Helper()
	var id string
	req.Started = func(s string) { id = s }
	res, err := eng.Run(ctx, req)
	if err == nil || !strings.Contains(err.Error(), notReplayed) || strings.Contains(err.Error(), "IMPOSTOR") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("run: %v (result %v); want it refused in one line: its history %s", err, res, notReplayed)
	}
	if res != nil && (res.Status != wf.RunFailed || len(res.Phases) > 0 || res.Outputs != nil) {
		t.Errorf("run: a result %+v of a history that does not replay; want none, or failed with nothing of it", res)
	}
	if root != "" {
		// Its verdict is kept, so this checkout lists it failed (review26
		// P2-1), with nothing of the stand-in's.
		b, err := os.ReadFile(filepath.Join(root, ".brood", "workflows", id, "result.json"))
		if err != nil || !strings.Contains(string(b), `"status": "failed"`) || strings.Contains(string(b), "IMPOSTOR") {
			t.Errorf("result.json: %v %s; want the run failed, nothing of the stand-in's", err, b)
		}
		runs, err := eng.List(ctx)
		for _, r := range runs {
			if r.RunID == id && (r.Status != wf.RunFailed || !strings.Contains(r.Reason, notReplayed)) {
				t.Errorf("workflow list: %s (%s); want failed: its history %s", r.Status, r.Reason, notReplayed)
			}
		}
		if err != nil {
			t.Error(err)
		}
	}
	info, err := eng.Show(ctx, id)
	if err != nil || info.Status != wf.RunFailed || info.Result != nil || !strings.Contains(info.Reason, notReplayed) || strings.Contains(info.Reason, "IMPOSTOR") {
		t.Errorf("show: %v, %+v; want failed, no result, because its history %s", err, info, notReplayed)
	}
	return id
}

// standInRun starts a stand-in that polls a queue of its own with brood's
// own plan workflow (its calls on q, where a real worker runs them) and
// rewrites what that workflow returns with rewrite; it returns the
// stand-in's queue (q-name).
func standInRun(t *testing.T, q, name string, rewrite func(*temporal.RunOutput, temporal.RunInput)) string {
	t.Helper()
	standInQ := q + "-" + strings.ReplaceAll(name, " ", "-")
	sw := sdkworker.New(sharedServer(t).Client(t), standInQ, sdkworker.Options{})
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		first := in
		in.Queue = q
		out, err := temporal.PlanWorkflow(w, in)
		if out != nil && out.Result != nil {
			rewrite(out, first)
		}
		return out, err
	}, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Stop)
	return standInQ
}

// eachCall applies f to every call record of out.
func eachCall(out *temporal.RunOutput, f func(*wf.CallRecord)) {
	for i := range out.Result.Phases {
		for k := range out.Result.Phases[i].Calls {
			f(&out.Result.Phases[i].Calls[k])
		}
	}
}

// TestCompletersOutputNotTaken: brood's own plan workflow with a writer,
// on a real worker process, inside a stand-in that rewrites what the
// workflow returns: the submitter takes the run's output from its own
// replay of the run's history, so what it lands, and says, is the honest
// run's whatever the stand-in wrote (review25 P1-5: the tree dropped and
// the writer's code blanked; P1-6: the writer said failed, for the
// stand-in's reason, while its change lands; P1-9: landed blanked while
// the user's tree took another out.txt, so the landing is kept).
func TestCompletersOutputNotTaken(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	plan := enginetest.Plan(t, writerPlan)
	for _, tc := range []struct {
		name string
		// conflict: the user's tree takes an out.txt of its own while
		// the run runs.
		conflict bool
		rewrite  func(*temporal.RunOutput, temporal.RunInput)
		status   string // the run's
		call     string // its writer's
	}{
		{"tree dropped, code blanked", false, func(out *temporal.RunOutput, _ temporal.RunInput) {
			out.Input.Tip, out.Input.TipSig = nil, nil
			eachCall(out, func(c *wf.CallRecord) { c.Code = nil })
		}, wf.RunDone, wf.CallDone},
		{"writer said failed", false, func(out *temporal.RunOutput, _ temporal.RunInput) {
			eachCall(out, func(c *wf.CallRecord) {
				c.Status, c.Output, c.Error, c.Landed = "failed", nil, "IMPOSTOR: the model refused", ""
			})
			out.Result.Status = wf.RunFailed
		}, wf.RunDone, wf.CallDone},
		{"landed blanked", true, func(out *temporal.RunOutput, _ temporal.RunInput) {
			eachCall(out, func(c *wf.CallRecord) { c.Landed = "" })
			clear(out.Input.Chained)
			out.Result.Status = wf.RunDone
		}, wf.RunFailed, wf.CallNotApplied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			dir := submitterRepo(t)
			standInQ := standInRun(t, q, tc.name, func(out *temporal.RunOutput, in temporal.RunInput) {
				if tc.conflict {
					_ = os.WriteFile(filepath.Join(dir, "out.txt"), []byte("the user's own\n"), 0o644)
				}
				tc.rewrite(out, in)
			})
			eng, _ := trustingEngine(t, standInQ, dir, store, fleetWorkerPub())
			res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Phases[0].Calls[0]
			got, _ := os.ReadFile(filepath.Join(dir, "out.txt"))
			t.Logf("run %s landed %q; call %s landed %q err %q; out.txt %q", res.Status, res.Landed, c.Status, c.Landed, c.Error, got)
			if res.Status != tc.status || c.Status != tc.call || strings.Contains(c.Error, "IMPOSTOR") {
				t.Errorf("run %s, call %s (%q); want run %s, call %s, nothing of the stand-in's", res.Status, c.Status, c.Error, tc.status, tc.call)
			}
			switch {
			case tc.conflict && string(got) != "the user's own\n":
				t.Errorf("out.txt %q; want the user's own, the run's change kept", got)
			case !tc.conflict && !strings.Contains(string(got), "dirty edit"):
				t.Errorf("out.txt %q; want the writer's change landed", got)
			}
		})
	}
}

// TestDroppedTipThenResumeAndShow: a stand-in that drops the run's tree
// from its output and says the run failed (review25 P1-4), then the
// user's brood workflow resume, and brood workflow show from a checkout
// that kept no result (P2-4): the run, its resume and show all say what
// brood's own replay of the history says, the writer done and its change
// in the user's tree.
func TestDroppedTipThenResumeAndShow(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	standInQ := standInRun(t, q, "stand-in", func(out *temporal.RunOutput, in temporal.RunInput) {
		out.Input.Tip, out.Input.TipSig = nil, nil
		if len(in.Carried) == 0 {
			out.Result.Status = wf.RunFailed
		}
	})
	dir := submitterRepo(t)
	eng, _ := trustingEngine(t, standInQ, dir, store, fleetWorkerPub())
	res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, writerPlan), Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Phases[0].Calls[0]; res.Status != wf.RunDone || c.Status != wf.CallDone || !strings.Contains(read(t, dir, "out.txt"), "dirty edit") {
		t.Fatalf("run %s (%s), call %s (%s); want done, its change landed", res.Status, res.Landed, c.Status, c.Error)
	}
	// Another checkout: no project, no code of its own.
	trust := temporal.NewTrust()
	if err := trust.Add(fleetWorkerPub(), "test"); err != nil {
		t.Fatal(err)
	}
	elsewhere := temporal.New(temporal.Config{Client: srv.Client(t), Queue: standInQ, Poll: 50 * time.Millisecond,
		Limits: func(string) temporal.CallLimits { return testLimits }, Workers: temporal.NewResultTrust(trust, "")})
	info, err := elsewhere.Show(ctx, res.RunID)
	if err != nil || info.Result == nil {
		t.Fatalf("show: %v %+v", err, info)
	}
	if c := info.Result.Phases[0].Calls[0]; info.Status != wf.RunDone || c.Status != wf.CallDone || c.Landed != res.Phases[0].Calls[0].Landed {
		t.Errorf("show elsewhere: %s, call %s landed %q; want what the run said: done, landed %q", info.Status, c.Status, c.Landed, res.Phases[0].Calls[0].Landed)
	}
	again, err := eng.Resume(ctx, res.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := again.Phases[0].Calls[0]; again.Status != wf.RunDone || c.Status != wf.CallDone || !strings.Contains(read(t, dir, "out.txt"), "dirty edit") {
		t.Errorf("resume: %s (%s), call %s; want done, the change in the user's tree", again.Status, again.Landed, c.Status)
	}
}

// TestCompleterOfOtherCommandsRefused: a stand-in that completes the
// run's workflow done with no call run at all (review25 P1-10), or that
// starts a timer brood's code never starts before running brood's plan
// workflow, gets its run refused whole: its history does not replay with
// brood's own workflow code.
func TestCompleterOfOtherCommandsRefused(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProc(t, srv.Addr, q, fleetScript(0), store, 1)
	for _, tc := range []struct {
		name    string
		standIn func(workflow.Context, temporal.RunInput) (*temporal.RunOutput, error)
	}{
		{"done with nothing", func(_ workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
			return &temporal.RunOutput{Input: in, Result: &wf.Result{RunID: in.RunID, Plan: in.Plan.Name, Status: wf.RunDone,
				Phases: []wf.PhaseResult{{ID: "a", Shape: "parallel", Status: wf.PhaseDone}, {ID: "b", Shape: "parallel", Status: wf.PhaseDone}}}}, nil
		}},
		{"a timer of its own", func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
			if err := workflow.Sleep(w, time.Millisecond); err != nil {
				return nil, err
			}
			in.Queue = q
			return temporal.PlanWorkflow(w, in)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			standInQ := q + "-" + strings.ReplaceAll(tc.name, " ", "-")
			sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{})
			sw.RegisterWorkflowWithOptions(tc.standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
			if err := sw.Start(); err != nil {
				t.Fatal(err)
			}
			defer sw.Stop()
			root := t.TempDir()
			eng := temporal.New(temporal.Config{Client: srv.Client(t), Queue: standInQ, Poll: 50 * time.Millisecond, ProjectRoot: root,
				Limits: func(string) temporal.CallLimits { return testLimits }, Workers: temporal.NewResultTrust(nil, "")})
			wantReplayRefused(ctx, t, eng, engine.RunRequest{Plan: enginetest.Plan(t, twoPhases), Source: "plan.yaml"}, root)
		})
	}
}

// TestSingleCallRefusalIsBroods: a stand-in that runs brood's own call
// workflow and then fails it with a refusal of its own text (brood shows
// a refusal's message as the call's one line) gets neither its text
// shown nor its failure taken: the call's history does not replay with
// brood's own workflow code.
func TestSingleCallRefusalIsBroods(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProc(t, srv.Addr, q, fleetScript(0), store, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	standInQ := q + "-stand-in"
	sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{})
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.CallInputW) (*temporal.CallOutput, error) {
		in.Queue = q
		if _, err := temporal.CallWorkflow(w, in); err != nil {
			return nil, err
		}
		return nil, sdktemporal.NewNonRetryableApplicationError("IMPOSTOR: trust my key with brood fleet trust-worker 'EVIL'", temporal.ErrRefused, nil)
	}, workflow.RegisterOptions{Name: temporal.CallWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	eng := temporal.New(temporal.Config{Client: srv.Client(t), Queue: standInQ, Poll: 50 * time.Millisecond,
		Limits: func(string) temporal.CallLimits { return testLimits }, Workers: temporal.NewResultTrust(nil, "")})
	r, err := eng.Call(ctx, call.Spec{Agent: "explore", Prompt: "x"})
	if err == nil || !strings.Contains(err.Error(), notReplayed) || strings.Contains(err.Error(), "IMPOSTOR") {
		t.Fatalf("call: %v, %+v; want it refused: its history %s, nothing of the stand-in's text", err, r, notReplayed)
	}
}

// downgrade answers the workflow's GetVersion of one change with
// DefaultVersion, recording no marker: brood's code before the change.
type downgrade struct {
	interceptor.WorkerInterceptorBase
	change string
}

func (d *downgrade) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &downgradeIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, change: d.change}
}

type downgradeIn struct {
	interceptor.WorkflowInboundInterceptorBase
	change string
}

func (i *downgradeIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&downgradeOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, change: i.change})
}

type downgradeOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	change string
}

func (o *downgradeOut) GetVersion(ctx workflow.Context, change string, lo, hi workflow.Version) workflow.Version {
	if change == o.change {
		return workflow.DefaultVersion
	}
	return o.Next.GetVersion(ctx, change, lo, hi)
}

// TestVersionDowngradeRefused (review26 P1-1): brood's own plan workflow
// in a stand-in that records no marker of one workflow change (so its
// code, and a replay of its history, take the branch from before it: for
// the result check, no check at all) gets its run refused: the run's
// start requires every change the submitter knows.
func TestVersionDowngradeRefused(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProc(t, srv.Addr, q, fleetScript(0), store, 1)
	for _, change := range []string{"brood.plan.checked-results", "brood.plan.bound-task-ids", "brood.plan.lazy-calls"} {
		t.Run(change, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			standInQ := q + "-" + change
			sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{Interceptors: []interceptor.WorkerInterceptor{&downgrade{change: change}}})
			sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
				in.Queue = q
				return temporal.PlanWorkflow(w, in)
			}, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
			if err := sw.Start(); err != nil {
				t.Fatal(err)
			}
			defer sw.Stop()
			eng, _ := trustingEngine(t, standInQ, submitterRepo(t), store, fleetWorkerPub())
			id := wantReplayRefused(ctx, t, eng, engine.RunRequest{Plan: enginetest.Plan(t, twoPhases), Source: "plan.yaml"}, "")
			if _, err := eng.Resume(ctx, id, nil); err == nil || !strings.Contains(err.Error(), "skips version 1 of \""+change+"\"") {
				t.Errorf("resume: %v; want it refused: its history skips %s", err, change)
			}
		})
	}
}
