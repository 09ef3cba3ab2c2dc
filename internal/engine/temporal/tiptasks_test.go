package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// firstTip keeps the first tip a chain step of the stand-in's run signed
// (an intercepted chain activity's result).
type firstTip struct {
	interceptor.WorkerInterceptorBase
	got *temporal.ChainOutput
}

func (f *firstTip) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &firstTipIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, f: f}
}

type firstTipIn struct {
	interceptor.WorkflowInboundInterceptorBase
	f *firstTip
}

func (i *firstTipIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&firstTipOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, f: i.f})
}

type firstTipOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	f *firstTip
}

func (o *firstTipOut) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	fut := o.Next.ExecuteActivity(ctx, typ, args...)
	if typ != temporal.ChainActivityName {
		return fut
	}
	return &tipFuture{Future: fut, f: o.f}
}

type tipFuture struct {
	workflow.Future
	f *firstTip
}

func (t *tipFuture) Get(ctx workflow.Context, v any) error {
	err := t.Future.Get(ctx, v)
	if out, ok := v.(*temporal.ChainOutput); ok && err == nil && t.f.got == nil && out.Tip != nil {
		c := *out
		t.f.got = &c
	}
	return err
}

// TestTipWritersNotInTreeNotApplied: brood's own plan workflow, with two
// writers in sequence on a real worker process, inside a stand-in that
// completes the run: honest, both land; with the run's tree dropped from
// its output (review23 P1-3), or with the tree the first chain step signed
// in place of the last, both land too: the submitter takes the tree its
// own replay of the run's history returns, never the output's (the check
// of the writers against the tip's signed list, notInTip, stays as
// defence in depth: tiptasks_internal_test.go).
func TestTipWritersNotInTreeNotApplied(t *testing.T) {
	srv := sharedServer(t)
	plan := enginetest.Plan(t, "name: p\nphases:\n  - id: a\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n"+
		"  - id: b\n    parallel: [{agent: general-purpose, prompt: \"copy what you see\"}]\n")
	for _, tc := range []struct {
		name    string
		mode    string
		status  string
		lost    []bool // by phase: its writer not-applied
		outFile bool
	}{
		{"honest", "", wf.RunDone, []bool{false, false}, true},
		{"dropped tip", "drop", wf.RunDone, []bool{false, false}, true},
		{"first step's tip", "first", wf.RunDone, []bool{false, false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			store := "file://" + t.TempDir()
			startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			standInQ := q + "-stand-in"
			first := &firstTip{}
			sw := sdkworker.New(srv.Client(t), standInQ, sdkworker.Options{Interceptors: []interceptor.WorkerInterceptor{first}})
			standIn := func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
				in.Queue = q
				out, err := temporal.PlanWorkflow(w, in)
				switch {
				case out == nil:
				case tc.mode == "drop":
					out.Input.Tip, out.Input.TipSig = nil, nil
				case tc.mode == "first" && first.got != nil:
					out.Input.Tip, out.Input.TipSig = first.got.Tip, first.got.Sig
				}
				return out, err
			}
			sw.RegisterWorkflowWithOptions(standIn, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
			if err := sw.Start(); err != nil {
				t.Fatal(err)
			}
			defer sw.Stop()
			dir := submitterRepo(t)
			eng, state := trustingEngine(t, standInQ, dir, store, fleetWorkerPub())
			res, err := eng.Run(ctx, engine.RunRequest{Plan: plan, Source: "plan.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Errorf("run %s (%s; landed %q); want %s", res.Status, res.Reason, res.Landed, tc.status)
			}
			for i, lost := range tc.lost {
				c := res.Phases[i].Calls[0]
				t.Logf("phase %s: %s landed %q err %q", res.Phases[i].ID, c.Status, c.Landed, c.Error)
				switch {
				case lost && (c.Status != wf.CallNotApplied || !strings.Contains(c.Error, "not in the tree the run came back with") || strings.Contains(c.Landed, "in the run's tree")):
					t.Errorf("phase %s's writer %s (landed %q, error %q); want not-applied: its change is not in the tree the run came back with", res.Phases[i].ID, c.Status, c.Landed, c.Error)
				case lost:
					if _, err := os.Stat(filepath.Join(state, res.RunID, c.TaskID+".patch")); err != nil {
						t.Errorf("phase %s's writer's patch is not kept for the user: %v", res.Phases[i].ID, err)
					}
				case c.Status != wf.CallDone:
					t.Errorf("phase %s's writer %s (%s); want done", res.Phases[i].ID, c.Status, c.Error)
				}
			}
			got, err := os.ReadFile(filepath.Join(dir, "out.txt"))
			if (err == nil) != tc.outFile {
				t.Fatalf("out.txt in the user's tree: %v (%v); want %v (landed %q)", err == nil, err, tc.outFile, res.Landed)
			}
			// The second writer saw out.txt (its listing names it): none
			// of its change is in the tree when it is not-applied.
			if second := strings.Contains(string(got), "out.txt"); tc.outFile && second == tc.lost[1] {
				t.Errorf("out.txt is %q: the second writer's change in the user's tree %v; want %v", got, second, !tc.lost[1])
			}
		})
	}
}
