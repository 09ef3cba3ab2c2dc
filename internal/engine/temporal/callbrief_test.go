package temporal_test

// Review26 P2-3: a single call's result answers the input its submitter
// sent. For an unsigned submission (no fleet key, an --allow-unsigned
// worker) whoever completes the call's workflow tasks can schedule its
// activity with a brief of its own; the worker signs that brief's digest,
// and the submitter, which knows the input brood's call workflow makes
// from its own start, takes no result signed for another.

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// reBrief schedules a single call's activity with the BETA brief in
// place of the ALPHA one its submitter sent (task, agent and all else
// kept).
type reBrief struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *reBrief) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if in, ok := args[0].(temporal.CallInput); ok && typ == temporal.CallActivityName {
		in.Spec.Prompt = strings.ReplaceAll(in.Spec.Prompt, "ALPHA", "BETA")
		in.Spec.Description = strings.ReplaceAll(in.Spec.Description, "ALPHA", "BETA")
		args = []any{in}
	}
	return o.Next.ExecuteActivity(ctx, typ, args...)
}

// standInCallOn runs brood's own call workflow polling queue name, its
// activity on the fleet's queue q, its commands rewritten by out (nil:
// none).
func standInCallOn(t *testing.T, name, q string, out func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor) {
	t.Helper()
	opts := sdkworker.Options{}
	if out != nil {
		opts.Interceptors = []interceptor.WorkerInterceptor{&rewriter{out: out}}
	}
	sw := sdkworker.New(sharedServer(t).Client(t), name, opts)
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.CallInputW) (*temporal.CallOutput, error) {
		in.Queue = q
		return temporal.CallWorkflow(w, in)
	}, workflow.RegisterOptions{Name: temporal.CallWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Stop)
}

// TestSingleCallTakesOnlyItsOwnBrief: a real brood worker (it allows
// unsigned submissions) answers ALPHA and BETA differently; a stand-in
// running brood's own call workflow schedules the user's unsigned ALPHA
// call with the BETA brief. The worker's genuine signed answer to BETA is
// not taken: brood subagent fails in one line saying the result answers
// another input and what to do, and neither brood tasks show nor a
// resume's landing takes it. Honest, the ALPHA answer is taken.
func TestSingleCallTakesOnlyItsOwnBrief(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, swapScript, store, 1, "")
	for _, tc := range []struct {
		name string
		out  func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor
	}{
		{"honest", nil},
		{"re-briefed", func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
			return &reBrief{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			name := q + "-" + tc.name
			standInCallOn(t, name, q, tc.out)
			eng, _ := trustingEngine(t, name, submitterRepo(t), store, fleetWorkerPub())
			r, err := eng.Call(ctx, call.Spec{Agent: "explore", Prompt: "ALPHA", Description: "look at ALPHA"})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("call %s: %s, text %q, error %q", r.TaskID, r.Status, r.Text, r.Error)
			if tc.out == nil {
				if r.Status != dispatch.StatusDone || !strings.Contains(r.Text, "alpha-answer") {
					t.Fatalf("honest: %s (%s), text %q; want done with the ALPHA answer", r.Status, r.Error, r.Text)
				}
				return
			}
			const what = "for another input than the one this submitter sent"
			if r.Status != dispatch.StatusFailed || strings.Contains(r.Text+r.Summary, "beta-answer") || !strings.Contains(r.Error, what) ||
				!strings.Contains(r.Error, "brood fleet keygen") || strings.Contains(r.Error, "\n") {
				t.Errorf("re-briefed: %s, text %q, error %q; want failed in one line saying the result was signed %s, and what to do, the BETA answer not taken", r.Status, r.Text, r.Error, what)
			}
			d, err := eng.Task(ctx, r.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			if d.Result == nil || d.Result.Status == dispatch.StatusDone || strings.Contains(d.Result.Text, "beta-answer") || !strings.Contains(d.Result.Error, what) {
				t.Errorf("tasks show: %s, result %+v; want it refused, the BETA answer not taken", d.Status, d.Result)
			}
			l, err := eng.LandCall(ctx, r.TaskID)
			if err != nil || l.State != "refused" || !strings.Contains(l.Message, what) {
				t.Errorf("resume's landing: %v, %+v; want refused: the result answers another input", err, l)
			}
		})
	}
}
