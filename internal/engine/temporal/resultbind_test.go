package temporal_test

// Issue 26, review25 P1-8 (re-aimed by review26): a worker's signed
// result names the call it answers (the plan call's key, its number, its
// input's digest), so whoever completes a plan's workflow cannot take a
// genuine result for another call of the run: not by scheduling a call
// with another call's brief, nor by completing a ballot's activity with a
// result signed for another ballot. The submitter takes the run's output
// from its own replay of the history, whose workflow (the gate) compares
// each result's binding with the input brood's code schedules.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// standIn runs brood's own PlanWorkflow on the fleet's queue q, polling
// queue name, its commands rewritten by out (nil: none).
func standIn(t *testing.T, name, q string, out func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor) {
	t.Helper()
	opts := sdkworker.Options{}
	if out != nil {
		opts.Interceptors = []interceptor.WorkerInterceptor{&rewriter{out: out}}
	}
	sw := sdkworker.New(sharedServer(t).Client(t), name, opts)
	sw.RegisterWorkflowWithOptions(func(w workflow.Context, in temporal.RunInput) (*temporal.RunOutput, error) {
		in.Queue = q
		return temporal.PlanWorkflow(w, in)
	}, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Stop)
}

// rewriter wraps a workflow's outbound calls (its commands) in out.
type rewriter struct {
	interceptor.WorkerInterceptorBase
	out func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor
}

func (r *rewriter) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &rewriterIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, r: r}
}

type rewriterIn struct {
	interceptor.WorkflowInboundInterceptorBase
	r *rewriter
}

func (i *rewriterIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(i.r.out(out))
}

// swapBriefs schedules the ALPHA call with BETA's brief and the BETA
// call with ALPHA's (key, task and number kept).
type swapBriefs struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *swapBriefs) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if in, ok := args[0].(temporal.CallInput); ok && typ == temporal.CallActivityName {
		from, to := "ALPHA", "BETA"
		if in.Spec.Prompt == "BETA" {
			from, to = to, from
		}
		in.Spec.Prompt = to
		in.Spec.Description = strings.ReplaceAll(in.Spec.Description, from, to)
		args = []any{in}
	}
	return o.Next.ExecuteActivity(ctx, typ, args...)
}

const swapScript = `
agents:
  explore:
    - cases:
        - if: "ALPHA"
          say: "alpha-answer"
      say: "beta-answer"
`

// TestResultsAreTakenForTheirOwnCall (review25 TestRV25KeySwap, as
// review26 re-aimed it): a real brood worker answers a plan's two calls;
// a stand-in running brood's plan workflow schedules each with the other's
// brief (key, task and number kept). Neither answer is taken for the other
// call (the worker admits a keyed call only as that key's call of the
// signed plan, and the replayed workflow uses a result only when it
// names the input brood's code schedules), so the phase's output is never
// the swap: honest, it is the calls' own answers in order.
func TestResultsAreTakenForTheirOwnCall(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, swapScript, store, 2, "")
	plan := "name: p\nphases:\n  - id: a\n    parallel: [{agent: explore, prompt: \"ALPHA\"}, {agent: explore, prompt: \"BETA\"}]\n"
	for _, tc := range []struct {
		name    string
		out     func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor
		output  string
		refused bool
	}{
		{"honest", nil, `["alpha-answer","beta-answer"]`, false},
		{"briefs swapped", func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
			return &swapBriefs{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}}
		}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			name := q + "-" + strings.ReplaceAll(tc.name, " ", "-")
			standIn(t, name, q, tc.out)
			eng, _ := trustingEngine(t, name, submitterRepo(t), store, fleetWorkerPub())
			res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, plan), Source: "plan.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			ph := res.Phases[0]
			got, _ := json.Marshal(ph.Output)
			for i, c := range ph.Calls {
				o, _ := json.Marshal(c.Output)
				if refused := c.Status == "failed" && c.Output == nil; refused != tc.refused {
					t.Errorf("record %s (task %s): %s, output %s, error %q; want refused %v", c.Key, c.TaskID, c.Status, o, c.Error, tc.refused)
				}
				if c.Status == wf.CallDone && string(o) != []string{`"alpha-answer"`, `"beta-answer"`}[i] {
					t.Errorf("record %s taken with output %s: another call's answer", c.Key, o)
				}
			}
			if tc.output != "" && string(got) != tc.output {
				t.Errorf("phase a output %s; want %s", got, tc.output)
			}
			if strings.Contains(string(got), `"beta-answer","alpha-answer"`) {
				t.Errorf("phase a output %s: the stand-in's choice", got)
			}
		})
	}
}

const ballotScript = `
agents:
  explore:
    - cases:
        - if: "vote 1"
          say: "` + "```json\\n{\\\"choice\\\": \\\"A\\\"}\\n```" + `"
      say: "` + "```json\\n{\\\"choice\\\": \\\"B\\\"}\\n```" + `"
`

// elsewhere schedules the ballots other than the first on queue fake.
type elsewhere struct {
	interceptor.WorkflowOutboundInterceptorBase
	fake string
}

func (o *elsewhere) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if in, ok := args[0].(temporal.CallInput); ok && typ == temporal.CallActivityName && in.Key != "ballot/v1" {
		ctx = workflow.WithTaskQueue(ctx, o.fake)
	}
	return o.Next.ExecuteActivity(ctx, typ, args...)
}

// TestBallotsAreNotStuffed (review25 TestRV25BallotStuffing, as review26
// re-aimed it): a real brood worker casts a votes phase's first ballot
// (A); a stand-in running brood's plan workflow has the other ballots'
// activities completed by a fake worker with a ballot A genuinely signed
// by the fleet's trusted worker key for the first ballot's call of this
// execution. The replayed workflow refuses them ("for another call of
// this run"), so the submitter's own aggregate is never a unanimous A;
// honest, the real worker casts all three, B by two to one.
func TestBallotsAreNotStuffed(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, ballotScript, store, 3, "")
	fake := q + "-fake"
	fw := sdkworker.New(srv.Client(t), fake, sdkworker.Options{})
	fw.RegisterActivityWithOptions(func(ctx context.Context, in temporal.CallInput) (*temporal.CallOutput, error) {
		out := &temporal.CallOutput{Result: call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: "done",
			Summary: "```json\n{\"choice\": \"A\"}\n```", Output: json.RawMessage(`{"choice":"A"}`)}}
		v1 := in
		v1.Key, v1.Seq, v1.Spec.Prompt = "ballot/v1", 1, "vote 1"
		temporal.SignResultAsFleetWorker(ctx, testbrood.FleetSeed, v1, "w:1", out)
		return out, nil
	}, activity.RegisterOptions{Name: temporal.CallActivityName})
	if err := fw.Start(); err != nil {
		t.Fatal(err)
	}
	defer fw.Stop()
	for _, tc := range []struct {
		name  string
		out   func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor
		tally string
	}{
		{"honest", nil, `{"\"A\"":1,"\"B\"":2}`},
		{"stuffed", func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
			return &elsewhere{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}, fake: fake}
		}, `{"\"A\"":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			name := q + "-" + tc.name
			standIn(t, name, q, tc.out)
			eng, _ := trustingEngine(t, name, submitterRepo(t), store, fleetWorkerPub())
			res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, votePlan), Source: "plan.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			ph := res.Phases[0]
			got, _ := json.Marshal(ph.Output)
			var agg struct {
				Tally json.RawMessage `json:"tally"`
			}
			_ = json.Unmarshal(got, &agg)
			if string(agg.Tally) != tc.tally {
				t.Errorf("ballot output %s (phase %s); want tally %s", got, ph.Status, tc.tally)
			}
			for _, c := range ph.Calls {
				if c.Key == "ballot/v1" || tc.name == "honest" {
					continue
				}
				if c.Status != "failed" || !strings.Contains(c.Error, "for another call of this run") {
					t.Errorf("record %s (task %s): %s %q; want refused, for another call of this run", c.Key, c.TaskID, c.Status, c.Error)
				}
			}
		})
	}
}
