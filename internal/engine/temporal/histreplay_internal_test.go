package temporal

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// fixture is a recorded history of testdata, its workflow id and
// execution, and the result its workflow completed with.
func fixture(t *testing.T, file string) (*historypb.History, string, string, []byte) {
	t.Helper()
	f, err := os.Open("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var in RunInput
	start := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
	if err := converter.GetDefaultDataConverter().FromPayloads(start.GetInput(), &in); err != nil {
		t.Fatal(err)
	}
	last := h.GetEvents()[len(h.GetEvents())-1].GetWorkflowExecutionCompletedEventAttributes()
	if last == nil {
		t.Fatalf("%s does not end with the workflow's completion", file)
	}
	exec := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId()
	return h, in.RunID, exec, last.GetResult().GetPayloads()[0].GetData()
}

// sameRecorded: out is the recorded output but for the calls' figures
// (usage, attempts, worker): today's workflow takes none from a result
// whose signature does not cover them (a v1 one: fleetsig3), where the
// workflow that recorded it did.
func sameRecorded(t *testing.T, out *RunOutput, recorded []byte) bool {
	t.Helper()
	b, _ := json.Marshal(out)
	var got, want any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(recorded, &want); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(withoutFigures(got), withoutFigures(want))
}

func withoutFigures(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"usage", "attempts", "worker"} {
			delete(x, k)
		}
		for k, e := range x {
			x[k] = withoutFigures(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutFigures(e)
		}
	}
	return v
}

// TestRecordedRunsReplayToTheirOwnOutput: an honest run's history (the
// recorded fixtures: one from before lazy calls, one whose workflow
// checked its results against signed worker keys) replays with today's
// workflow code to the output its workflow completed with (but for the
// calls' figures a v1 signature does not cover: sameRecorded): what the
// submitter takes of an honest run is what it took before.
func TestRecordedRunsReplayToTheirOwnOutput(t *testing.T) {
	for _, file := range []string{"plan-history-before-lazy-calls.json", "plan-history-checked-results-v1.json"} {
		t.Run(file, func(t *testing.T) {
			h, id, exec, recorded := fixture(t, file)
			got, err := replayHistory(replayConfig{dc: converter.GetDefaultDataConverter()}, h, id, exec, PlanWorkflowName, PlanWorkflow, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Ran || got.Err != nil || got.Out == nil {
				t.Fatalf("replay: ran %v, err %v, out %v; want the workflow's output", got.Ran, got.Err, got.Out)
			}
			if !sameRecorded(t, got.Out, recorded) {
				b, _ := json.Marshal(got.Out)
				t.Errorf("replayed output differs from the recorded one:\n got %s\nwant %s", b, recorded)
			}
		})
	}
}

// TestReplayRefusesAnotherWorkflowsHistory: a history whose commands are
// not brood's (a timer the code never starts, put before the first
// activity) is refused with brood's line; one that also carries a version
// of a change this brood does not know says to upgrade brood.
func TestReplayRefusesAnotherWorkflowsHistory(t *testing.T) {
	timer := func(h *historypb.History) {
		// The first activity's schedule becomes a timer's start.
		for _, e := range h.GetEvents() {
			if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
				e.EventType = enumspb.EVENT_TYPE_TIMER_STARTED
				e.Attributes = &historypb.HistoryEvent_TimerStartedEventAttributes{TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{TimerId: "1"}}
				return
			}
		}
	}
	newer := func(h *historypb.History) {
		timer(h)
		for _, e := range h.GetEvents() {
			if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "Version" {
				p, _ := converter.GetDefaultDataConverter().ToPayloads("brood.plan.from-the-future")
				m.Details["change-id"] = p
				return
			}
		}
		t.Fatal("the fixture has no version marker")
	}
	for _, tc := range []struct {
		name   string
		change func(*historypb.History)
		want   string
	}{
		{"another command", timer, "does not replay with brood's own workflow code"},
		{"a newer brood's", newer, "upgrade brood"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, id, exec, _ := fixture(t, "plan-history-checked-results-v1.json")
			tc.change(h)
			_, err := replayHistory(replayConfig{dc: converter.GetDefaultDataConverter()}, h, id, exec, PlanWorkflowName, PlanWorkflow, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("replay: %v; want one line saying %q", err, tc.want)
			}
		})
	}
}

// TestReplayDoesNotCompareActivityInputs: the Go SDK's replayer matches
// an ActivityTaskScheduled event to the workflow's command by activity id
// and type only: a history whose scheduled call carries another input
// than brood's code made replays, to the same output. What a call's input
// was is checked at the worker (the signed brief) and in its result's
// signature, not by the replay (docs/scale-out.md).
func TestReplayDoesNotCompareActivityInputs(t *testing.T) {
	h, id, exec, recorded := fixture(t, "plan-history-checked-results-v1.json")
	changed := false
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			p, _ := converter.GetDefaultDataConverter().ToPayloads(map[string]string{"prompt": "IMPOSTOR: another brief"})
			a.Input = &commonpb.Payloads{Payloads: p.GetPayloads()}
			a.TaskQueue.Name = "another-queue"
			changed = true
		}
	}
	if !changed {
		t.Fatal("the fixture schedules no activity")
	}
	got, err := replayHistory(replayConfig{dc: converter.GetDefaultDataConverter()}, h, id, exec, PlanWorkflowName, PlanWorkflow, nil)
	if err != nil {
		t.Fatalf("the SDK's replay compared an activity's input (update docs/scale-out.md): %v", err)
	}
	if !sameRecorded(t, got.Out, recorded) {
		t.Errorf("the replay's output changed with the scheduled inputs")
	}
}
