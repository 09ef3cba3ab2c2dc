package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine/temporal"
)

const unverifiedLandScript = `
agents:
  general-purpose:
    - cases:
        - if: "BETA"
          tools:
            - Write: {file_path: "evil.txt", content: "pwned\n"}
      tools:
        - Write: {file_path: "ok.txt", content: "alpha\n"}
    - say: "DONE [{{.Prompt}}]"
`

// TestLandCallKeepsAnUnverifiedRunsChange: a keyless checkout with no
// record of a task's starts (a call sent before brood kept them, or
// another clone) is asked to land the task's latest run, which someone
// who can start workflows started with the user's snapshot and a brief
// of their own: tasks resume T (LandCall) applies nothing, says the run
// is unverified, and keeps its change as a patch for the user to read
// (review31 P2-2).
func TestLandCallKeepsAnUnverifiedRunsChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	eng, dir, task := otherStartOfAnUnrecordedCall(ctx, t, nil)
	l, err := eng.LandCall(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
		t.Fatalf("LandCall applied an unverified run's change: %+v", l)
	}
	if l.State != "unverified" || !strings.HasPrefix(l.Message, "unverified:") || !strings.Contains(l.Message, "git apply ") {
		t.Fatalf("LandCall = %+v, want state unverified, the unverified line and how to apply the kept patch", l)
	}
	file := l.Message[strings.LastIndex(l.Message, "git apply ")+len("git apply "):]
	patch, err := os.ReadFile(strings.TrimSuffix(file, ")"))
	if err != nil || !strings.Contains(string(patch), "evil.txt") {
		t.Fatalf("the kept patch %s: %v %q", file, err, patch)
	}
}

// TestTaskShowsTheStartsAgentNotTheMemo: tasks show's agent and
// description are those of the start brood's replay took, not the memo
// whoever starts or completes the workflow writes (review31 P3-4).
func TestTaskShowsTheStartsAgentNotTheMemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	eng, _, task := otherStartOfAnUnrecordedCall(ctx, t, map[string]any{"brood_agent": "planted-agent", "brood_source": "planted description"})
	d, err := eng.Task(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if d.Agent != "general-purpose" || d.Description != "write BETA" {
		t.Fatalf("tasks show: agent %q, description %q; want the start's general-purpose, \"write BETA\"", d.Agent, d.Description)
	}
}

// otherStartOfAnUnrecordedCall runs a keyless writer call ALPHA from a
// checkout, removes the checkout's record of its start (a call sent
// before brood kept them), and starts, with memo, a new execution of
// its task with the user's snapshot and a brief of its own (BETA, which
// writes evil.txt) on a worker that has not run the task; it returns
// once that run ended.
func otherStartOfAnUnrecordedCall(ctx context.Context, t *testing.T, memo map[string]any) (*temporal.Engine, string, string) {
	return otherStart(ctx, t, otherStartOpts{memo: memo})
}

// otherStartOpts vary otherStart: with replay the checkout keeps its
// record and the other start is the user's very input; with running the
// checkout keeps its record and no worker takes the other start, which
// otherStart leaves running.
type otherStartOpts struct {
	memo    map[string]any
	replay  bool
	running bool
}

// otherStart is otherStartOfAnUnrecordedCall as o says.
func otherStart(ctx context.Context, t *testing.T, o otherStartOpts) (*temporal.Engine, string, string) {
	memo, replay := o.memo, o.replay
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	first := startWorkerProcWith(t, srv.Addr, q, unverifiedLandScript, store, 1, writerSettings)
	dir := submitterRepo(t)
	eng, _ := trustingEngine(t, q, dir, store, fleetWorkerPub())
	r, err := eng.Call(ctx, call.Spec{Agent: "general-purpose", Prompt: "ALPHA", Description: "write ALPHA"})
	if err != nil {
		t.Fatal(err)
	}
	task := r.TaskID
	it := c.GetWorkflowHistory(ctx, "brood-call-"+task, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	ev, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	var in temporal.CallInputW
	if err := converterFromPayload(ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0], &in); err != nil {
		t.Fatal(err)
	}
	if !replay && !o.running {
		rec, err := temporal.RecordDir(ctx, dir, task)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(rec, "sent.json")); err != nil {
			t.Fatal(err)
		}
	}
	first.kill() // a worker that has not run the task takes the other start
	if !o.running {
		startWorkerProcWith(t, srv.Addr, q, unverifiedLandScript, store, 1, writerSettings)
	}
	forged := in
	if !replay {
		forged.Spec.Prompt, forged.Spec.Description = "BETA", "write BETA"
		forged.Signed = nil
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + task, TaskQueue: q, Memo: memo,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}, temporal.CallWorkflowName, forged)
	if err != nil {
		t.Fatal(err)
	}
	if o.running {
		return eng, dir, task
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("the other start's run: %v", err)
	}
	return eng, dir, task
}

// TestReplayedStartIsNotTheUsersCall: a new execution of a keyless call's
// task with exactly the start input the user's checkout sent (anyone who
// reads the history has it) is not taken as the user's call there: the
// checkout keeps the executions it started, and tasks show refuses
// another (review31 P3-2).
func TestReplayedStartIsNotTheUsersCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	eng, _, task := otherStart(ctx, t, otherStartOpts{replay: true})
	d, err := eng.Task(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status == "done" || !strings.Contains(d.LastFailure, "did not start it") {
		t.Fatalf("tasks show of a replayed start: %s, %q; want it refused as not this checkout's", d.Status, d.LastFailure)
	}
}

// TestRunningOtherStartIsNotShownAsTheUsersCall: while a new execution of
// a keyless call's task that someone else started with a brief of their
// own runs, tasks show in the checkout that keeps the task's starts does
// not show it as the user's call (review31 P3-3).
func TestRunningOtherStartIsNotShownAsTheUsersCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	eng, _, task := otherStart(ctx, t, otherStartOpts{running: true})
	d, err := eng.Task(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != "failed" || !strings.Contains(d.LastFailure, "not started with an input this checkout sent") || d.Heartbeat != nil {
		t.Fatalf("tasks show of a running other start: %s, %q, heartbeat %v; want it refused as not this checkout's", d.Status, d.LastFailure, d.Heartbeat)
	}
}
