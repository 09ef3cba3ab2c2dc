package temporal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// callWorkflowID is the workflow of a single call's task: every workflow
// of the task (its first run and each resume) has this id, the latest
// being the one Temporal describes.
func callWorkflowID(taskID string) string { return "brood-call-" + taskID }

// lastCall is the latest workflow run of a call's task, ended: its info
// and output (out nil: refused, or from before outputs kept the last
// heartbeat), and the start input its replay took (ownStart accepted
// it). x is nil when the task has no workflow on the fleet.
func (e *Engine) lastCall(ctx context.Context, taskID string) (*workflowpb.WorkflowExecutionInfo, *CallOutput, *CallInputW, error) {
	wid := callWorkflowID(taskID)
	d, err := e.cfg.Client.DescribeWorkflowExecution(ctx, wid, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil, nil, nil
	} else if err != nil {
		return nil, nil, nil, fmt.Errorf("task %s on Temporal: %w", taskID, err)
	}
	x := d.GetWorkflowExecutionInfo()
	if x.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return x, nil, nil, fmt.Errorf("task %s is still running on the fleet: %w", taskID, dispatch.ErrTaskBusy)
	}
	// Its output as brood's own replay of its history makes it, never
	// the result the server holds (histreplay.go).
	// A start this key did not sign is not replayed (ownStart).
	read, err := e.replayCall(ctx, wid, x.GetExecution().GetRunId(), e.ownStart(ctx, taskID, x.GetExecution().GetRunId()))
	var nm notMine
	if errors.As(err, &nm) {
		return x, nil, nil, nm.error // not this key's run: that is what to say
	} else if err != nil {
		return x, nil, nil, fmt.Errorf("task %s: %w", taskID, err)
	}
	start := &read.start
	out, err := callEnd(read.got)
	if err != nil || out.Last == nil || out.Last.TaskID != taskID {
		return x, nil, start, nil
	}
	// A result no worker this submitter trusts signed is refused here
	// too: never landed, never continued from as done.
	var taken bool
	out.Result, taken = e.takeCall(ctx, taskID, wid, x.GetExecution().GetRunId(), read.start, &out, read.times, true)
	out.refused = !taken
	out.notHandedOn = handOnRefusal(taskID, read.start, out.Last)
	return x, &out, start, nil
}

// resumeCall fills a resume's spec from the task's latest workflow on the
// fleet and says where that left the call: its last heartbeat (the
// transcript in the store), so whichever worker gets the resume continues
// the conversation, and — for a writer whose change never came back (a
// cancel, a kill) — the snapshot it ran in, to continue from it plus that
// change. A call that ended with a result brought its change back: it is
// landed in the submitter's tree first when its submitter did not (it
// died), so the follow-up starts from the tree with it; note says so. A
// task with no workflow here resumes as before (on a worker that has its
// records).
func (e *Engine) resumeCall(ctx context.Context, s *call.Spec) (hb *Heartbeat, snap *codesnap.Snapshot, note string, err error) {
	x, out, start, err := e.lastCall(ctx, s.Resume)
	if err != nil || x == nil {
		return nil, nil, "", err
	}
	fields := x.GetMemo().GetFields()
	if o, ok := e.foreign(fields); ok {
		return nil, nil, "", notHere("task", s.Resume, o, "brood tasks resume "+s.Resume)
	}
	own, err := e.ownCall(ctx, s.Resume, x)
	if err != nil {
		return nil, nil, "", err
	}
	if own != nil {
		// What this key signed, never the run's memo or output.
		s.Agent = cmp.Or(s.Agent, own.Spec.Agent)
		s.Description = cmp.Or(s.Description, own.Spec.Description)
	}
	if start != nil {
		// Without a key: the start its replay took (ownStart), never the
		// run's memo, which whoever completes its workflow tasks can
		// upsert (the replay matches a memo upsert by its type only:
		// review28 P3-1).
		s.Agent = cmp.Or(s.Agent, start.Spec.Agent)
		s.Description = cmp.Or(s.Description, start.Spec.Description)
	}
	if out == nil {
		return nil, nil, "", nil
	}
	if out.refused {
		// Its result was not taken (an untrusted key's, one signed for a
		// brief its submitter did not send): nothing of that run, its
		// conversation or its change, is handed on, or the follow-up
		// would continue it and land its change (review28 P1-1).
		return nil, nil, "", fmt.Errorf("task %s: the result of its last run on the fleet was refused, so nothing of that run is continued, neither its conversation nor its change (%s): run the call again with brood subagent", s.Resume, out.Error)
	}
	if out.notHandedOn != "" {
		return nil, nil, "", errors.New(out.notHandedOn)
	}
	s.Agent = cmp.Or(s.Agent, out.Agent)
	if own != nil {
		out.Snapshot = own.Code
	}
	last := *out.Last
	last.Result = Ref{}
	switch out.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
		if note, err = e.landEarlier(ctx, s.Resume, x.GetExecution().GetRunId(), out, s.Agent); err != nil {
			return nil, nil, "", err
		}
		last.Code = nil
	}
	if last.Code == nil || out.Snapshot == nil {
		last.Code = nil
		return &last, nil, note, nil
	}
	return &last, out.Snapshot, note, nil
}

// landEarlier lands a finished workflow run's change before a follow-up
// starts from the tree. A change that does not apply is kept and the
// follow-up refused, once: the next resume continues without it (the
// user merged it by hand or chose not to).
func (e *Engine) landEarlier(ctx context.Context, taskID, runID string, out *CallOutput, agent string) (string, error) {
	l, ok, err := e.landFinished(ctx, taskID, runID, out, agent)
	if err != nil || !ok {
		return "", err
	}
	switch l.State {
	case landAlready:
		return "", nil
	case landApplied:
		return "[brood: landed the change its earlier run left on the fleet: " + strings.TrimPrefix(l.Message, "fleet copy: ") + "; the follow-up starts from your tree with it]", nil
	case landKeptBefore:
		return "[brood: the change its earlier run left on the fleet is not in your tree (" + strings.TrimPrefix(l.Message, "fleet copy: ") + "); the follow-up starts without it]", nil
	case landKept:
		return "", fmt.Errorf("task %s: its earlier run's changes did not land in your tree, so the follow-up was not started: %s; merge them by hand if you want them, then run brood tasks resume %s again (they are not tried again)", taskID, l.Message, taskID)
	case landBusy:
		return "", fmt.Errorf("task %s: %s; try again when it is done: %w", taskID, l.Message, dispatch.ErrTaskBusy)
	}
	return "", fmt.Errorf("task %s: the follow-up was not started: %s; run brood tasks resume %s again", taskID, l.Message, taskID)
}

// landFinished lands the change a finished workflow run of a call brought
// back, under that run's record (ok false: it brought back none).
//
// agent is the call's agent as this submitter knows it (its own record of
// the start): its definition's deny rules judge the change, whatever agent
// the result names; only where the submitter knows none is the result's
// taken (signed by a worker key it trusts, on a signed fleet).
func (e *Engine) landFinished(ctx context.Context, taskID, runID string, out *CallOutput, agent string) (l landOutcome, ok bool, err error) {
	r := out.Result
	res, err := callChange(&r)
	switch {
	case err != nil:
		return l, false, fmt.Errorf("task %s: %w", taskID, err)
	case res == nil || out.Snapshot == nil:
		return l, false, nil
	}
	return e.land(ctx, callLanding(callKey(taskID, runID), out.Snapshot, res, cmp.Or(agent, r.Agent))), true, nil
}

// CallLanding is what became of a fleet call's change in this repository
// (Engine.LandCall; brood tasks resume ID).
type CallLanding struct {
	TaskID string `json:"task_id"`
	// State: landed (now), in_tree (before), kept (it did not apply: kept
	// and named in Message, not tried again), none (the call brought back
	// no change), unfinished (it ended without a result: a resume with a
	// prompt continues it, its change so far with it), unverified (no
	// record here says the run is the user's call: its change is kept as
	// a patch, not applied).
	State   string `json:"state"`
	Message string `json:"message"`
}

// LandCall lands what the latest workflow run of a fleet call (brood
// subagent --engine temporal) changed, when its submitter did not (it died
// while the call ran or before it landed the change): once, whoever asks,
// in this repository. An error: no such call, it is still running, or the
// landing failed (nothing was applied; try again).
func (e *Engine) LandCall(ctx context.Context, taskID string) (*CallLanding, error) {
	if whole, err := e.resolveCall(ctx, taskID); err == nil {
		taskID = whole // a prefix or a tail of the task id
	}
	if err := dispatch.CheckID(taskID); err != nil {
		return nil, err
	}
	x, out, _, err := e.lastCall(ctx, taskID)
	switch {
	case err != nil:
		return nil, err
	case x == nil:
		return nil, fmt.Errorf("no fleet call %s on queue %s: check the id (brood tasks) and --temporal/--task-queue", taskID, e.cfg.Queue)
	}
	if o, ok := e.foreign(x.GetMemo().GetFields()); ok {
		return nil, notHere("task", taskID, o, "brood tasks resume "+taskID)
	}
	own, err := e.ownCall(ctx, taskID, x)
	if err != nil {
		return nil, err
	}
	var agent string
	if own != nil && out != nil {
		out.Snapshot = own.Code // the tree this key signed, never the run's output's
		agent = own.Spec.Agent
	}
	cl := &CallLanding{TaskID: taskID, State: "unfinished",
		Message: fmt.Sprintf("the call ended without a result (%s): nothing to land; continue it with brood tasks resume %s \"PROMPT\"", e.infoOf(x).Status, taskID)}
	if out != nil && out.refused {
		cl.State, cl.Message = "refused", out.Error
	}
	if out == nil {
		return cl, nil
	}
	switch out.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
	default:
		return cl, nil
	}
	if why := e.unverified(ctx, taskID); why != "" {
		return e.keepUnverified(ctx, taskID, x.GetExecution().GetRunId(), out, why)
	}
	l, ok, err := e.landFinished(ctx, taskID, x.GetExecution().GetRunId(), out, agent)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		cl.State, cl.Message = "none", "the call brought back no change: nothing to land"
		return cl, nil
	}
	cl.Message = l.Message
	switch l.State {
	case landApplied:
		cl.State = "landed"
	case landAlready:
		cl.State = "in_tree"
	case landKept, landKeptBefore:
		cl.State = "kept"
	case landBusy:
		return nil, fmt.Errorf("task %s: %s: %w", taskID, l.Message, dispatch.ErrTaskBusy)
	default:
		return nil, fmt.Errorf("task %s: %s; run brood tasks resume %s again", taskID, l.Message, taskID)
	}
	return cl, nil
}
