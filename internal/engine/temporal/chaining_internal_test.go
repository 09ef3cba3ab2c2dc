package temporal

import (
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestAChainingWriterIsLandingNotQueued (issue 26, P3): a writer whose
// child has ended while its change is put into the run's tree has no
// call activity, only its chain activity: the progress says it is landing
// there, never that it waits for a worker; calls with no activity at all
// are queued.
func TestAChainingWriterIsLandingNotQueued(t *testing.T) {
	pending := func(name string, st enumspb.PendingActivityState) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, State: st}
	}
	for _, tc := range []struct {
		name                             string
		acts                             []*workflowpb.PendingActivityInfo
		running                          int
		wantRunning, wantChain, wantWait int
	}{
		{"one call running", []*workflowpb.PendingActivityInfo{pending(CallActivityName, enumspb.PENDING_ACTIVITY_STATE_STARTED)}, 1, 1, 0, 0},
		{"one writer chaining", []*workflowpb.PendingActivityInfo{pending(ChainActivityName, enumspb.PENDING_ACTIVITY_STATE_STARTED)}, 1, 0, 1, 0},
		{"a chain waiting for a worker", []*workflowpb.PendingActivityInfo{pending(ChainActivityName, enumspb.PENDING_ACTIVITY_STATE_SCHEDULED)}, 1, 0, 1, 0},
		{"one of each, and one waiting", []*workflowpb.PendingActivityInfo{
			pending(CallActivityName, enumspb.PENDING_ACTIVITY_STATE_STARTED),
			pending(ChainActivityName, enumspb.PENDING_ACTIVITY_STATE_STARTED),
			pending(CallActivityName, enumspb.PENDING_ACTIVITY_STATE_SCHEDULED)}, 3, 1, 1, 1},
		{"handed out, no activity yet", nil, 2, 0, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: tc.acts}
			events := []wf.Event{{Phase: "p", Status: wf.RunRunning, Counts: wf.Counts{Running: tc.running}}}
			started, _ := agentSlots(d)
			splitRunning(events, started, chaining(d))
			if c := events[0].Counts; c.Running != tc.wantRunning || c.Chaining != tc.wantChain || c.Queued != tc.wantWait {
				t.Errorf("running %d, chaining %d, queued %d; want %d, %d, %d", c.Running, c.Chaining, c.Queued, tc.wantRunning, tc.wantChain, tc.wantWait)
			}
		})
	}
}
