package temporal_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	brt "github.com/broodhq/brood/internal/engine/temporal"
)

// TestContinuationIsTheCallsTask: an attempt continues only its own
// task, from a transcript uploaded for that task, whatever names it (an
// earlier attempt's heartbeat, which an impostor worker may have sent, or
// the call's From, which a plan's stand-in workflow writes) and on a
// worker with no record of the task: another run's transcript, a
// transcript naming no task (a worker from before) and a heartbeat naming
// another task are refused for good, and nothing runs.
func TestContinuationIsTheCallsTask(t *testing.T) {
	store := &brt.DirStore{Dir: t.TempDir()}
	id, other := dispatch.NewID(), dispatch.NewID()
	raw := []byte(`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"the other run's secret"}]}}` + "\n")
	put := func(b []byte) brt.Ref {
		ref, err := store.PutBytes(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	own, others, bare := put(brt.TranscriptObject(id, raw)), put(brt.TranscriptObject(other, raw)), put(raw)
	// A writer's partial change, and the transcript it was uploaded with.
	patch := put([]byte("another run's partial patch"))
	change := &codesnap.Result{Tree: strings.Repeat("ab", 20), Patch: &patch, Files: []string{"x.go"}}
	withChange := put(brt.TranscriptObjectWith(id, change, raw))
	reordered := put(append([]byte(`{"task_id":"`+id+`","type":"fleet_task"}`+"\n"), raw...))
	spec := call.Spec{Agent: "explore", Prompt: "brief", TaskID: id}
	cases := []struct {
		name    string
		details *brt.Heartbeat // the attempt's heartbeat details (nil: none)
		from    *brt.Heartbeat
		want    string // "" continued from raw
	}{
		{"its own transcript, in the heartbeat", &brt.Heartbeat{TaskID: id, Transcript: own}, nil, ""},
		{"its own transcript, in From", nil, &brt.Heartbeat{TaskID: id, Transcript: own}, ""},
		{"another task's transcript, in the heartbeat", &brt.Heartbeat{TaskID: id, Transcript: others}, nil, "is task " + other + "'s, and the call continues task " + id},
		{"another task's transcript, in From", nil, &brt.Heartbeat{TaskID: id, Transcript: others}, "is task " + other + "'s"},
		{"a transcript naming no task", &brt.Heartbeat{TaskID: id, Transcript: bare}, nil, "names no task"},
		{"a first line no worker writes", &brt.Heartbeat{TaskID: id, Transcript: reordered}, nil, "does not start with the line a worker writes"},
		{"a heartbeat naming another task", &brt.Heartbeat{TaskID: other, Transcript: others}, nil, "continues only its own task"},
		{"a change uploaded with its transcript", &brt.Heartbeat{TaskID: id, Transcript: withChange, Code: change}, nil, ""},
		{"a change its transcript was not uploaded with", &brt.Heartbeat{TaskID: id, Transcript: own, Code: change}, nil, "is not the one uploaded with task " + id},
		{"a change with no transcript", &brt.Heartbeat{TaskID: id, Code: change}, nil, "names a partial change and no transcript"},
		{"its transcript, its change left out", &brt.Heartbeat{TaskID: id, Transcript: withChange}, nil, ""},
		{"a heartbeat naming another task recorded here", &brt.Heartbeat{TaskID: other, Transcript: others}, nil, "continues only its own task"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen []byte
			ran := false
			root := t.TempDir()
			if strings.HasSuffix(tc.name, "recorded here") {
				// This worker ran the other task for another plan run, of
				// the call's own agent (red team P1-2).
				if err := dispatch.WriteOwner(dispatch.Records(root), dispatch.Owner{TaskID: other, Agent: "explore", Asker: "workflow R0"}); err != nil {
					t.Fatal(err)
				}
			}
			a := &brt.Activities{Store: store, ProjectRoot: root, Runner: runnerFunc(func(_ context.Context, s call.Spec) (*call.Result, error) {
				ran = true
				seen, _ = os.ReadFile(s.Transcript)
				return &call.Result{TaskID: s.TaskID, Status: dispatch.StatusDone}, nil
			})}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
			if tc.details != nil {
				env.SetHeartbeatDetails(*tc.details)
			}
			_, err := env.ExecuteActivity(brt.CallActivityName, brt.CallInput{Spec: spec, From: tc.from})
			if tc.want == "" {
				if err != nil || string(seen) != string(raw) {
					t.Fatalf("got %v, the child seeded with %q; want it continued from the task's transcript", err, seen)
				}
				return
			}
			var app *temporal.ApplicationError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &app) || !app.NonRetryable() {
				t.Fatalf("got %v; want refused for good saying %q", err, tc.want)
			}
			if ran {
				t.Fatal("the call ran")
			}
		})
	}
}

// TestPlanTaskIDs: a plan's task ids are task ids brood accepts, distinct
// within an execution and between executions, and each names its run.
func TestPlanTaskIDs(t *testing.T) {
	at := time.Date(2026, 12, 5, 20, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for _, id := range []string{
		brt.PlanTaskID("R1", at, 0), brt.PlanTaskID("R1", at, 1), brt.PlanTaskID("R1", at.Add(time.Millisecond), 0),
		brt.PlanTaskID("R2", at, 0), brt.PlanTaskID("R1", at, 1<<32-1),
	} {
		if err := dispatch.CheckID(id); err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("%s named twice", id)
		}
		seen[id] = true
	}
	if a, b := brt.PlanTaskID("R1", at, 7), brt.PlanTaskID("R1", at, 7); a != b {
		t.Fatalf("a replay names %s, the run named %s", b, a)
	}
	// A run's calls handed out at once differ within a prefix a user
	// types (brood tasks show 01M93ZGFVE2S...).
	for n := uint32(0); n < 255; n++ {
		if a, b := brt.PlanTaskID("R1", at, n), brt.PlanTaskID("R1", at, n+1); a[:12] == b[:12] {
			t.Fatalf("calls %d and %d of one run share their first 12 characters: %s, %s", n, n+1, a, b)
		}
	}
}
