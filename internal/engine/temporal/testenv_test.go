package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/enginetest"
	brt "github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// The workflow's logic on the SDK's test workflow environment (no server):
// shapes, retries of a silent child, refusals that are not retried.

// fakeCalls is the call activity's stand-in: it answers by prompt.
type fakeCalls struct {
	mu       sync.Mutex
	attempts map[string]int
}

func (f *fakeCalls) call(ctx context.Context, in brt.CallInput) (*call.Result, error) {
	f.mu.Lock()
	f.attempts[in.Spec.Prompt]++
	n := f.attempts[in.Spec.Prompt]
	f.mu.Unlock()
	id := in.Spec.TaskID
	switch {
	case strings.HasPrefix(in.Spec.Prompt, "silent"):
		if n < 3 {
			last := &call.Result{TaskID: id, Status: dispatch.StatusKilled}
			return nil, temporal.NewApplicationErrorWithOptions("the lifeguard killed it", brt.ErrChildSilent, temporal.ApplicationErrorOptions{Details: []any{last}})
		}
	case strings.HasPrefix(in.Spec.Prompt, "refused"):
		return nil, temporal.NewNonRetryableApplicationError("unknown agent", brt.ErrRefused, nil)
	case strings.HasPrefix(in.Spec.Prompt, "list"):
		return &call.Result{TaskID: id, Status: dispatch.StatusDone, Output: json.RawMessage(`{"items":["a","b"]}`)}, nil
	}
	return &call.Result{TaskID: id, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "did " + in.Spec.Prompt}, nil
}

func TestPlanWorkflowOnTestEnvironment(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fake := &fakeCalls{attempts: map[string]int{}}
	env.RegisterWorkflowWithOptions(brt.PlanWorkflow, workflow.RegisterOptions{Name: brt.PlanWorkflowName})
	env.RegisterActivityWithOptions(fake.call, activity.RegisterOptions{Name: brt.CallActivityName})
	p := enginetest.Plan(t, `
name: logic
phases:
  - id: list
    parallel:
      - {id: l, agent: explore, prompt: "list", schema: {type: object, required: [items]}}
      - {agent: explore, prompt: "silent child"}
      - {agent: explore, prompt: "refused call"}
  - id: each
    each: l.items[*]
    stages: [{agent: explore, prompt: "item {{item}}"}, {agent: explore, prompt: "then {{prev}}"}]
`)
	env.ExecuteWorkflow(brt.PlanWorkflowName, brt.RunInput{RunID: dispatch.NewID(), Plan: p, Queue: "q",
		Limits: map[string]brt.CallLimits{"": {Attempts: 3}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out brt.RunOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	res := out.Result
	list, _ := res.Outputs["list"].([]any)
	if len(list) != 3 || list[1] != "did silent child" || list[2] != nil {
		t.Fatalf("list outputs %#v; want the silent call retried to its answer and the refused one null", res.Outputs["list"])
	}
	if fake.attempts["silent child"] != 3 || fake.attempts["refused call"] != 1 {
		t.Fatalf("attempts %v; want the silent child retried twice, the refusal never", fake.attempts)
	}
	each, _ := res.Outputs["each"].([]any)
	// Each stage's brief holds the earlier output as an untrusted block
	// (the item from list's output too); the echo's own tags, nested,
	// are defanged.
	if want := "did then \n<subagent-result from=\"prev\" trust=\"untrusted\">\ndid item \n&lt;subagent-result from=\"item\" trust=\"untrusted\">\na\n&lt;/subagent-result>\n"; len(each) != 2 || !strings.HasPrefix(each0(each), want) {
		t.Fatalf("each outputs %#v", res.Outputs["each"])
	}
	if res.Status != wf.RunDone || res.Agents != 7 {
		t.Fatalf("status %s agents %d: %+v", res.Status, res.Agents, res.Phases)
	}
	// The journal handed to a resume names every call's task.
	_, done, failed, open := wf.Summary(out.Journal)
	if done != 6 || failed != 1 || open != 0 {
		t.Fatalf("journal: %d done, %d failed, %d open", done, failed, open)
	}
}

// runnerFunc is a call.Runner.
type runnerFunc func(ctx context.Context, s call.Spec) (*call.Result, error)

func (f runnerFunc) Call(ctx context.Context, s call.Spec) (*call.Result, error) { return f(ctx, s) }

// TestRetryReturnsTheStoredResult: an attempt whose heartbeat names a
// stored result (its child ended; the worker died before it could report)
// returns that result and starts no child.
func TestRetryReturnsTheStoredResult(t *testing.T) {
	store := &brt.DirStore{Dir: t.TempDir()}
	id := dispatch.NewID()
	want := call.Result{TaskID: id, Agent: "explore", Status: dispatch.StatusDone, Summary: "finished on the dead worker"}
	b, _ := json.Marshal(want)
	ref, err := store.PutBytes(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	a := &brt.Activities{Store: store, ProjectRoot: t.TempDir(), Runner: runnerFunc(func(context.Context, call.Spec) (*call.Result, error) {
		return nil, errors.New("a finished call ran again")
	})}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
	env.SetHeartbeatDetails(brt.Heartbeat{TaskID: id, Result: ref})
	v, err := env.ExecuteActivity(brt.CallActivityName, brt.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "x", TaskID: id}})
	if err != nil {
		t.Fatal(err)
	}
	var got call.Result
	if err := v.Get(&got); err != nil || got.Summary != want.Summary || got.TaskID != id {
		t.Fatalf("got %+v, %v; want the stored result", got, err)
	}
}

// TestRetryContinuesTheTranscript: an attempt whose heartbeat names a
// transcript (another worker's run of the call) starts the same task here
// from that conversation; a reference that does not match what is stored
// is refused, never read.
func TestRetryContinuesTheTranscript(t *testing.T) {
	store := &brt.DirStore{Dir: t.TempDir()}
	id := dispatch.NewID()
	transcript := []byte(`{"type":"message"}` + "\n")
	ref, _ := store.PutBytes(context.Background(), brt.TranscriptObject(id, transcript))
	var seen call.Spec
	var seenTranscript []byte
	a := &brt.Activities{Store: store, ProjectRoot: t.TempDir(), Runner: runnerFunc(func(_ context.Context, s call.Spec) (*call.Result, error) {
		seen = s
		seenTranscript, _ = os.ReadFile(s.Transcript)
		return &call.Result{TaskID: s.TaskID, Status: dispatch.StatusDone, Summary: "continued"}, nil
	})}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
	env.SetHeartbeatDetails(brt.Heartbeat{TaskID: id, Transcript: ref, Position: ref.Size - int64(len(brt.TranscriptObject(id, nil)))})
	if _, err := env.ExecuteActivity(brt.CallActivityName, brt.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "brief", TaskID: id}}); err != nil {
		t.Fatal(err)
	}
	if seen.TaskID != id || seen.Resume != "" || string(seenTranscript) != string(transcript) || seen.Prompt != "brief" {
		t.Fatalf("spec %+v with transcript %q; want task %s started from the stored transcript", seen, seenTranscript, id)
	}
	bad := ref
	bad.SHA256 = strings.Repeat("0", 64)
	env2 := s.NewTestActivityEnvironment()
	env2.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
	env2.SetHeartbeatDetails(brt.Heartbeat{TaskID: id, Transcript: bad})
	if _, err := env2.ExecuteActivity(brt.CallActivityName, brt.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "brief", TaskID: id}}); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("a reference to other bytes: %v; want it refused", err)
	}
}

// each0 is the first output of an each phase as text ("" when none).
func each0(each []any) string {
	if len(each) == 0 {
		return ""
	}
	s, _ := each[0].(string)
	return s
}
