package temporal

import (
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// TestServerCloseIsSaid (review26 P3-3): a recorded run's history whose
// close the server wrote as a termination or a timeout after the
// workflow's code ran to its end still gives the code's output, and its
// reason says the server's close; the history as recorded says none.
func TestServerCloseIsSaid(t *testing.T) {
	e := &Engine{cfg: Config{DataConverter: converter.GetDefaultDataConverter()}}
	for _, tc := range []struct {
		name string
		end  *historypb.HistoryEvent
		want string
	}{
		{"completed", nil, ""},
		{"terminated", &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionTerminatedEventAttributes{WorkflowExecutionTerminatedEventAttributes: &historypb.WorkflowExecutionTerminatedEventAttributes{Reason: "x"}}},
			"but the server recorded it terminated on Temporal"},
		{"timed out", &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionTimedOutEventAttributes{WorkflowExecutionTimedOutEventAttributes: &historypb.WorkflowExecutionTimedOutEventAttributes{}}},
			"but the server recorded it timed out on Temporal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, id, exec, _ := fixture(t, "plan-history-checked-results-v1.json")
			if tc.end != nil {
				last := h.Events[len(h.Events)-1]
				tc.end.EventId, tc.end.EventTime = last.EventId, last.EventTime
				h.Events[len(h.Events)-1] = tc.end
			}
			got, err := e.replayRunHistory(id, exec, h, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := got.out
			said := strings.Contains(out.Result.Reason, "but the server recorded it")
			if tc.want == "" && said || tc.want != "" && !strings.Contains(out.Result.Reason, tc.want) {
				t.Errorf("the run: %s, reason %q; want its reason to say %q", out.Result.Status, out.Result.Reason, tc.want)
			}
		})
	}
}
