package worker_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	wf "github.com/broodhq/brood/internal/workflow"
)

// echoScript's explore answers with the first user text of its
// conversation: a call continued from a transcript says whose it was.
const echoScript = `
agents:
  explore:
    - say: "asked: {{.Prompt}}"
    - say: "asked: {{.Prompt}}"
    - say: "asked: {{.Prompt}}"
`

// TestForgedPlanCallReadsNoOtherRun is the attack on a worker with no
// record of the task (another worker of the fleet): a stand-in that
// completes a signed explore-only plan's workflow task schedules one of
// its calls continuing another run's task from its transcript in the
// store (its reference is in that run's history) — by the task's id, by a
// pick-up of it, or under a task id of its own run. Before the fix the
// worker continued the other conversation and the stand-in read it in the
// call's answer; now each is refused and nothing runs, while a call of
// the plan's own task runs.
func TestForgedPlanCallReadsNoOtherRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := devserver.Start(t)
	f := &signedFleet{queue: fmt.Sprintf("otherrun-%d", os.Getpid()), store: "file://" + t.TempDir()}
	var pub string
	f.key, pub = keyIn(t)
	worker := func() (*proc, func() int) {
		wp := workerProject(t, echoScript)
		p := startBrood(t, wp, nil, "brood worker: task queue", "worker", "--concurrency", "2", "--trusted-key", pub,
			"--temporal", srv.Addr, "--task-queue", f.queue, "--store", f.store)
		return p, func() int { return len(tasks(wp)) }
	}
	var err error
	if f.c, err = temporal.Dial(ctx, temporal.ClientOptions{HostPort: srv.Addr}); err != nil {
		t.Fatal(err)
	}
	defer f.c.Close()
	limits := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 1}

	// The victim: a signed call of someone's, run on a worker that then goes.
	first, _ := worker()
	const secret = "the victim's secret is 4711"
	victim := dispatch.NewID()
	vin := temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: secret, TaskID: victim}, Queue: f.queue, Limits: limits}
	if vin.Signed, err = f.key.Sign(temporal.Submission{Kind: "call", Workflow: "brood-call-" + victim, Queue: f.queue, Spec: &vin.Spec,
		Limits: map[string]temporal.CallLimits{"": limits}, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	out, err := f.run(ctx, "brood-call-"+victim, vin)
	if err != nil || out.Status != dispatch.StatusDone || out.Last == nil || out.Last.Transcript.IsZero() {
		t.Fatalf("the victim's call: %v %+v; want it done, its transcript in the store", err, out)
	}
	stolen := *out.Last // in the victim's history, for whoever reaches the frontend
	first.kill()
	_, ran := worker() // no record of the victim's task

	standIn := f.queue + "-stand-in"
	w := sdkworker.New(f.c, standIn, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(forgedCall, workflow.RegisterOptions{Name: "forged-call"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cases := []struct {
		name string
		task func(run string, s *call.Spec, in *temporal.CallInput)
		want string // "ran: " for the plan's own call
	}{
		{"the other task continued", func(_ string, s *call.Spec, in *temporal.CallInput) {
			s.TaskID, in.From = victim, &stolen
		}, "not one plan run"},
		{"the other task picked up", func(_ string, s *call.Spec, in *temporal.CallInput) {
			s.Resume, s.Continue, in.From = victim, true, &stolen
		}, "not one plan run"},
		{"its own task from the other's transcript", func(run string, s *call.Spec, in *temporal.CallInput) {
			own := temporal.PlanTaskID(run, time.Now(), 0)
			from := stolen
			from.TaskID = own
			s.TaskID, in.From = own, &from
		}, "not what worker key"}, // signed for the victim's task, not this one
		{"its own task", func(run string, s *call.Spec, _ *temporal.CallInput) {
			s.TaskID = temporal.PlanTaskID(run, time.Now(), 0)
		}, "ran: done "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ran()
			run := "forged-run-" + dispatch.NewID()
			plan := &wf.Plan{Name: "ro", Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{{Agent: "explore", Prompt: "review {{inputs.file}}"}}}}}
			in := temporal.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "review anything", Parent: "workflow " + run, Description: "ro: review anything"}}
			tc.task(run, &in.Spec, &in)
			// Its From pinned as if a resume of the run had read it, so the
			// worker's own check of who signed it is what refuses it.
			var froms map[string]string
			if in.From != nil {
				froms = temporal.FromPins(map[string]temporal.Heartbeat{in.From.TaskID: *in.From})
			}
			signed, err := f.key.Sign(temporal.Submission{Kind: "plan", Workflow: run, Queue: f.queue, Plan: plan, Froms: froms,
				Limits: map[string]temporal.CallLimits{"": limits}, At: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			in.Signed = signed
			r, err := f.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: run, TaskQueue: standIn}, "forged-call", f.queue, in)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if err := r.Get(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "4711") {
				t.Fatalf("the stand-in read the other run's conversation: %s", got)
			}
			if strings.HasPrefix(tc.want, "ran: ") {
				if !strings.HasPrefix(got, tc.want) || ran() != before+1 {
					t.Fatalf("the plan's own call: %s (%d task(s) run); want %q", got, ran()-before, tc.want)
				}
				return
			}
			if !strings.HasPrefix(got, "refused: ") || !strings.Contains(got, tc.want) {
				t.Errorf("the forged call: %s\nwant refused saying %q", got, tc.want)
			}
			if n := ran() - before; n != 0 {
				t.Errorf("the worker ran %d task(s) for it", n)
			}
		})
	}
}
