package temporal

import (
	"cmp"
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
)

// ownCall is the submission of task taskID's latest workflow run x, when
// this submitter's key signed it for that task: a resume takes the call's
// agent, description and snapshot from it, never from the run's memo or
// output, which whoever started or completed the run wrote. Anyone who
// reaches the frontend can start a run of the task's workflow id ending
// with an output of their making; taken as it stood, a resume would send
// honest workers their agent and tree under the user's signature (review17
// X1, for calls). Without a key nothing is signed and nothing is checked
// (nil, nil).
func (e *Engine) ownCall(ctx context.Context, taskID string, x *workflowpb.WorkflowExecutionInfo) (*Submission, error) {
	if e.cfg.Signer == nil {
		return nil, nil
	}
	wid := callWorkflowID(taskID)
	it := e.cfg.Client.GetWorkflowHistory(ctx, wid, x.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, notOurCall(taskID, e.cfg.Namespace, "it has no history")
	}
	ev, err := it.Next()
	if err != nil {
		return nil, fmt.Errorf("task %s on Temporal: read its latest run's start: %w", taskID, err)
	}
	start := ev.GetWorkflowExecutionStartedEventAttributes()
	var in CallInputW
	if start == nil || e.cfg.DataConverter.FromPayloads(start.GetInput(), &in) != nil {
		return nil, notOurCall(taskID, e.cfg.Namespace, "its input is not a call's")
	}
	return e.ownCallInput(ctx, taskID, in)
}

// notOurCall is the refusal of a run of task's workflow id this key did
// not start.
func notOurCall(taskID, namespace, why string) error {
	return fmt.Errorf("task %s's latest run on Temporal is not one this key started (%s): nothing of it is taken; check who can start workflows in namespace %s, and run the call again", taskID, why, namespace)
}

// ownCallInput is the submission this submitter's key signed for task
// taskID that in, a run's start input, carries, checked to be what in
// says (its spec, continuation, limits, queue, snapshot and versions);
// nil, nil without a key (nothing is signed nor checked).
func (e *Engine) ownCallInput(ctx context.Context, taskID string, in CallInputW) (*Submission, error) {
	s := e.cfg.Signer
	if s == nil {
		return nil, nil
	}
	wid := callWorkflowID(taskID)
	notOurs := func(why string) error { return notOurCall(taskID, e.cfg.Namespace, why) }
	if in.Signed == nil {
		return nil, notOurs("it carries no signed submission")
	}
	mine := NewTrust()
	if err := mine.Add(s.Public(), "this submitter's key"); err != nil {
		return nil, notOurs(err.Error())
	}
	store := e.store()
	sub, err := mine.verify(ctx, store, in.Signed)
	if err != nil {
		return nil, notOurs(err.Error())
	}
	switch {
	case sub.Kind != "call" || sub.Workflow != wid || sub.Spec == nil:
		return nil, notOurs(fmt.Sprintf("its submission is a %s of %q", sub.Kind, sub.Workflow))
	case cmp.Or(sub.Spec.Resume, sub.Spec.TaskID) != taskID:
		return nil, notOurs(fmt.Sprintf("its submission is task %s's", cmp.Or(sub.Spec.Resume, sub.Spec.TaskID)))
	case !sameJSON(sub.Spec, &in.Spec) || !sameJSON(sub.From, in.From):
		return nil, notOurs("its call or continuation is not the signed one")
	case !sameJSON(sub.Limits, map[string]CallLimits{"": in.Limits}) || sub.Queue != in.Queue:
		return nil, notOurs("its limits or task queue are not the signed ones")
	case !sameJSON(sub.Code, in.Code):
		return nil, notOurs("its snapshot is not the signed one")
	case !sameJSON(sub.Versions, in.Versions):
		return nil, notOurs("the workflow versions it requires are not the signed ones")
	}
	return sub, nil
}
