package temporal

import (
	"context"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wf "github.com/broodhq/brood/internal/workflow"
)

// downServer is a client whose server does not answer: every call the
// submitter's progress makes fails with err.
type downServer struct {
	client.Client
	err error
}

func (d downServer) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, d.err
}

func (d downServer) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	return nil, d.err
}

// TestProgressSaysTheServerCannotBeAsked (issue 26 F5): while the server
// does not answer, a plan's and a single call's progress say so, and that
// the calls' state is unknown, never a state the submitter did not read
// (queued, no worker polling); a submitter that stopped asking says
// nothing.
func TestProgressSaysTheServerCannotBeAsked(t *testing.T) {
	refused := status.Error(codes.Unavailable, "connection error: dial tcp 127.0.0.1:7233: connect: connection refused")
	for _, tc := range []struct {
		name    string
		id      string
		heard   bool
		err     error
		stopped bool
		want    bool
	}{
		{"a plan no worker answered yet", "run-1", false, refused, false, true},
		{"a plan whose phases were heard", "run-1", true, refused, false, true},
		{"a single call", callWorkflowID("01TASK"), false, refused, false, true},
		{"a timed out ask", "run-1", true, serviceerror.NewDeadlineExceeded("context deadline exceeded"), false, true},
		{"the submitter stopped asking", "run-1", true, refused, true, false},
		{"another error", "run-1", true, serviceerror.NewNotFound("workflow not found"), false, false},
		{"a far end's escapes", "run-1", true, status.Error(codes.Unavailable, "connection refused\x1b]0;owned\x07\x1b[2K\rphase p done"), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(Config{Client: downServer{err: tc.err}, Queue: "brood"})
			seen := map[string]wf.Event{}
			if tc.heard {
				seen["p"] = wf.Event{RunID: tc.id, Phase: "p", Status: wf.RunRunning, Counts: wf.Counts{Running: 6}}
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.stopped {
				cancel()
			}
			defer cancel()
			var got []wf.Event
			for range 2 { // said once, not at every poll
				e.progress(ctx, tc.id, "exec", seen, func(ev wf.Event) { got = append(got, ev) })
			}
			if !tc.want {
				if len(got) != 0 {
					t.Errorf("events %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Phase != "" || !strings.HasPrefix(got[0].Status, "unknown (cannot reach Temporal: ") ||
				!strings.Contains(got[0].Status, "connection refused") && !strings.Contains(got[0].Status, "deadline") ||
				!strings.Contains(got[0].Status, "the calls' state is unknown") || strings.Contains(got[0].Status, "queued") {
				t.Errorf("events %+v, want one saying Temporal cannot be reached and the calls' state is unknown", got)
			}
			if len(got) == 1 && strings.ContainsAny(got[0].Status, "\x1b\x07\r") {
				t.Errorf("status %q carries the far end's control characters to the terminal", got[0].Status)
			}
		})
	}
}
