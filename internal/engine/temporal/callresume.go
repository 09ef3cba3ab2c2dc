package temporal

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// callWorkflowID is the workflow of a single call's task: every workflow
// of the task (its first run and each resume) has this id, the latest
// being the one Temporal describes.
func callWorkflowID(taskID string) string { return "brood-call-" + taskID }

// resumeCall fills a resume's spec from the task's latest workflow on the
// fleet and says where that left the call: its last heartbeat (the
// transcript in the store), so whichever worker gets the resume continues
// the conversation, and — for a writer whose change never came back (a
// cancel, a kill) — the snapshot it ran in, to continue from it plus that
// change. A task with no workflow here resumes as before (on a worker that
// has its records).
func (e *Engine) resumeCall(ctx context.Context, s *call.Spec) (*Heartbeat, *codesnap.Snapshot, error) {
	wid := callWorkflowID(s.Resume)
	d, err := e.cfg.Client.DescribeWorkflowExecution(ctx, wid, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("task %s on Temporal: %w", s.Resume, err)
	}
	x := d.GetWorkflowExecutionInfo()
	if x.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, nil, fmt.Errorf("task %s is still running on the fleet: %w", s.Resume, dispatch.ErrTaskBusy)
	}
	fields := x.GetMemo().GetFields()
	if s.Agent == "" {
		e.memo(fields, memoAgent, &s.Agent)
	}
	if s.Description == "" {
		e.memo(fields, memoSource, &s.Description)
	}
	var out CallOutput
	if err := e.cfg.Client.GetWorkflow(ctx, wid, "").Get(ctx, &out); err != nil || out.Last == nil || out.Last.TaskID != s.Resume {
		// Refused, or from before outputs kept the last heartbeat.
		return nil, nil, nil
	}
	s.Agent = firstNonEmpty(s.Agent, out.Agent)
	hb := *out.Last
	hb.Result = Ref{}
	switch out.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
		// Its change came back with its result: the follow-up starts
		// from the submitter's tree as it is now.
		hb.Code = nil
	}
	if hb.Code == nil || out.Snapshot == nil {
		hb.Code = nil
		return &hb, nil, nil
	}
	return &hb, out.Snapshot, nil
}
