package temporal_test

import (
	"context"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// laggingVisibility is a client whose visibility has not caught up: every
// execution it lists is still running, with the memo of its start (no
// counts), as the server's visibility store can say for a moment after a
// run ends.
type laggingVisibility struct{ client.Client }

func (c laggingVisibility) ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	resp, err := c.Client.ListWorkflow(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &workflowservice.ListWorkflowExecutionsResponse{NextPageToken: resp.GetNextPageToken()}
	for _, x := range resp.GetExecutions() {
		y := proto.Clone(x).(*workflowpb.WorkflowExecutionInfo)
		y.Status, y.CloseTime = enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
		out.Executions = append(out.Executions, y)
	}
	return out, nil
}

// TestListSeesPastLaggingVisibility: a run that has ended is listed as it
// ended (status and counts), also while visibility still says running.
func TestListSeesPastLaggingVisibility(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	startWorker(t, c, q, enginetest.Script, 2, &temporal.DirStore{Dir: t.TempDir()})
	res, err := newEngine(c, q).Run(t.Context(), engine.RunRequest{Plan: enginetest.Plan(t, `
name: lagging
phases:
  - id: p
    parallel: [{agent: explore, prompt: "first one"}, {agent: explore, prompt: "second one"}]
`), Source: "plan.yaml"})
	if err != nil || res.Status != wf.RunDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	eng := newEngine(laggingVisibility{c}, q)
	runs, err := eng.List(t.Context())
	if err != nil || len(runs) != 1 || runs[0].Status != wf.RunDone || runs[0].Done != 2 {
		t.Fatalf("List = %+v, %v; want the run done with 2 agents done", runs, err)
	}
	tasks, err := eng.Tasks(t.Context())
	if err != nil || len(tasks) != 1 || tasks[0].Status != wf.RunDone {
		t.Fatalf("Tasks = %+v, %v; want the run done", tasks, err)
	}
}
