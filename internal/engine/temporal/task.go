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
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine"
	wf "github.com/broodhq/brood/internal/workflow"
)

// FleetTaskDetail is one fleet call as `brood tasks show` prints it: its
// listing, where it runs now (worker, attempt, its last heartbeat) and,
// once it ended, its result.
type FleetTaskDetail struct {
	FleetTask
	// Workflow is the Temporal workflow id (for the Temporal UI and CLI).
	Workflow string `json:"workflow"`
	// Worker is the identity of the worker that last ran the call.
	Worker string `json:"worker,omitempty"`
	// Attempt is the running attempt (1 is the first).
	Attempt int `json:"attempt,omitempty"`
	// Heartbeat is the running attempt's last heartbeat details.
	Heartbeat *Heartbeat `json:"heartbeat,omitempty"`
	// LastFailure is why the previous attempt ended, if one did.
	LastFailure string `json:"last_failure,omitempty"`
	// Refused: a worker (Worker, when one started it) refused the call,
	// so it ran nowhere; LastFailure says why.
	Refused bool `json:"refused,omitempty"`
	// Result is the finished call's verified result.
	Result *call.Result `json:"result,omitempty"`
	// Landed says whether the change the call brought back is in this
	// repository's tree, or waiting (its submitter died before it landed
	// it) and the command that lands it; empty: no change.
	Landed string `json:"landed,omitempty"`
	// Unverified says that nothing shows the call's run is the user's:
	// no key signed it and this checkout keeps no record of sending a start of it (callsent.go);
	// empty: one did.
	Unverified string `json:"unverified,omitempty"`
}

// Task is one fleet call by task id, or a unique prefix or tail of one
// (brood subagent --engine temporal), else a plan run or a plan's call
// (planTask), or ErrNotFound.
func (e *Engine) Task(ctx context.Context, q string) (*FleetTaskDetail, error) {
	d, err := e.task(ctx, q)
	return taskAdvice(d), err
}

func (e *Engine) task(ctx context.Context, q string) (*FleetTaskDetail, error) {
	id, plan, err := e.taskOrPlan(ctx, q)
	if err != nil || plan != nil {
		return plan, err
	}
	wid := callWorkflowID(id)
	d, err := e.cfg.Client.DescribeWorkflowExecution(ctx, wid, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("%w: no task %s here nor on the fleet", engine.ErrNotFound, id)
	} else if err != nil {
		return nil, fmt.Errorf("task %s on Temporal: %w", id, err)
	}
	note := ""
	// An ended run's history is read once: its replay and its times.
	var read *callRead
	var rerr error
	if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		exec := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		r, err := e.replayCall(ctx, wid, exec, e.ownStart(ctx, id, exec))
		read, rerr = &r, err
	}
	if own, why := e.ownRun(ctx, wid, d, read, rerr); own != nil {
		d, note, read = own, why, nil // the own run's history is its own
	}
	x := d.GetWorkflowExecutionInfo()
	if x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && read == nil {
		r, err := e.replayCall(ctx, wid, x.GetExecution().GetRunId(), e.ownStart(ctx, id, x.GetExecution().GetRunId()))
		read, rerr = &r, err
	}
	info := e.infoOf(x)
	out := &FleetTaskDetail{Workflow: wid, FleetTask: FleetTask{ID: id, Kind: "call", Status: info.Status, Description: info.Source, Created: info.Created}}
	defer func() {
		if note != "" {
			out.LastFailure = note
		}
	}()
	e.memo(x.GetMemo().GetFields(), memoAgent, &out.Agent)
	if read != nil && rerr == nil {
		// The start brood's replay took, not the memo, which whoever
		// completes the workflow's tasks can upsert (review31 P3-4).
		out.Agent, out.Description = read.start.Spec.Agent, read.start.Spec.Description
	}
	out.Unverified = e.unverified(ctx, id)
	for _, a := range d.GetPendingActivities() {
		out.Worker, out.Attempt = a.GetLastWorkerIdentity(), int(a.GetAttempt())
		out.LastFailure = a.GetLastFailure().GetMessage()
		if hd := a.GetHeartbeatDetails(); hd != nil && len(hd.GetPayloads()) > 0 {
			var hb Heartbeat
			if e.cfg.DataConverter.FromPayload(hd.GetPayloads()[0], &hb) == nil {
				out.Heartbeat = &hb
			}
		}
	}
	if out.Worker == "" {
		// Ended (or not yet started): who ran it and in how many
		// attempts, from the history.
		var h callHistory
		if read != nil {
			h = read.times
		} else {
			h = e.historyOf(ctx, wid, x.GetExecution().GetRunId())
		}
		out.Worker, out.Attempt = h.Worker, h.Attempts
	}
	if out.Status == wf.RunRunning {
		out.Status = e.liveStatus(ctx, d, &queueWord{e: e})
	}
	if x.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		if note = e.running(ctx, id, wid, x, out); note != "" {
			return out, nil
		}
	}
	if x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		e.callEnded(ctx, id, wid, x, out, *read, rerr)
	}
	return out, nil
}

// running checks the start of task id's running execution x (workflow
// wid) and fills out's agent and description from it; when it is not
// the user's call, why, and nothing of the run is shown as the task's:
// not its heartbeat, nor its worker.
func (e *Engine) running(ctx context.Context, id, wid string, x *workflowpb.WorkflowExecutionInfo, out *FleetTaskDetail) string {
	in, err := e.runningStart(ctx, id, wid, x.GetExecution().GetRunId())
	if err != nil {
		out.Status, out.Heartbeat, out.Worker = wf.RunFailed, nil, ""
		return err.Error()
	}
	out.Agent, out.Description = in.Spec.Agent, in.Spec.Description
	return ""
}

// callEnded fills out, the listing of task id's ended workflow run x
// (workflow wid), with what it ended with: read, brood's own replay of
// its history (rerr: it does not replay), never the result or failure
// the server holds (histreplay.go).
func (e *Engine) callEnded(ctx context.Context, id, wid string, x *workflowpb.WorkflowExecutionInfo, out *FleetTaskDetail, read callRead, rerr error) {
	got := read.got
	if rerr != nil {
		out.Status, out.LastFailure = wf.RunFailed, rerr.Error()
		return
	}
	switch x.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		// No result: why it ended (a worker's refusal, say) is its error.
		co, err := callEnd(got)
		if err == nil && x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
			// Its code ran to its end, then the server closed it
			// (review26 P3-3): both are said.
			out.LastFailure = "its workflow's code ended " + co.Status + " in brood's replay of its history, but the server recorded it " +
				strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(x.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_")), "_", " ") + " on Temporal, so its result is not taken"
		}
		if err != nil {
			out.LastFailure = finalMessage(err)
			var app *temporal.ApplicationError
			out.Refused = errors.As(got.Err, &app) && isRefusal(app)
		}
	}
	if x.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		if co, err := callEnd(got); err == nil {
			r, taken := e.takeCall(ctx, id, wid, x.GetExecution().GetRunId(), read.start, &co, read.times, false)
			if !taken {
				co.Result = r // nothing of it is shown as done, nor said to be waiting to land
			}
			// One count of attempts, the server's: a call that failed for
			// good with no attempt's result (failedCall) has none of its
			// own, one whose stored result a later attempt returned
			// (finished) has the attempts up to the one that ran it.
			r.Attempts = max(r.Attempts, out.Attempt)
			out.Result = &r
			out.Status = r.Status
			out.Agent = cmp.Or(out.Agent, r.Agent)
			out.Landed = e.callLanded(ctx, id, x.GetExecution().GetRunId(), &co)
			if o, ok := e.foreign(x.GetMemo().GetFields()); ok && out.Landed != "" {
				out.Landed = "submitted from " + o.String() + ": its change lands there, not in this checkout (brood tasks resume " + id + " there)"
			}
			if e.callKept(ctx, id, x.GetExecution().GetRunId()) && out.Status == wf.CallDone {
				out.Status = wf.CallNotApplied // as its submitter said: its change did not land
			}
			switch {
			case taken && r.Worker != "":
				// The worker whose child ran it, as signed: a later
				// attempt that returned its stored result (that worker
				// died) ran nothing.
				out.Worker = r.Worker
			case !taken:
				// Whoever completed it named itself as it liked.
				out.Worker = ""
			case out.Worker != "":
				out.Worker = "polled by " + printable(out.Worker) + " (its own word: the ending is unsigned)"
			}
		}
	}
}

// callLanded says where a finished call's change is (FleetTaskDetail.Landed).
func (e *Engine) callLanded(ctx context.Context, id, runID string, out *CallOutput) string {
	r := out.Result
	res, err := callChange(&r)
	switch {
	case err != nil:
		return err.Error()
	case res == nil || out.Snapshot == nil:
		return ""
	case e.cfg.Code == nil:
		return "on the fleet: brood tasks resume " + id + " from the repository it was submitted from lands it"
	}
	rec, err := e.readLanded(ctx, callKey(id, runID))
	switch {
	case err != nil:
		return "unknown here (" + err.Error() + ")"
	case rec != nil && rec.Done == patchID(res):
		return "in your tree (" + strings.TrimPrefix(rec.Message, "fleet copy: ") + ")"
	case rec != nil && rec.Kept == patchID(res):
		return "kept, not in your tree: " + strings.TrimPrefix(rec.Message, "fleet copy: ")
	}
	return "waiting, not in your tree (its submitter did not land it): brood tasks resume " + id + " lands it"
}

// ownRun is the call's own run when the latest run of its workflow id is
// a start a worker refused, or one this key did not start (someone
// started the id again, with a replayed or a forged submission, after the
// call finished): the newest run that completed, and a line saying so.
// Nil when the latest run is not refused or no run completed. read is the
// latest run's replay (rerr: it does not replay; nil read: it has not
// ended).
func (e *Engine) ownRun(ctx context.Context, wid string, d *workflowservice.DescribeWorkflowExecutionResponse, read *callRead, rerr error) (*workflowservice.DescribeWorkflowExecutionResponse, string) {
	x := d.GetWorkflowExecutionInfo()
	if x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED || read == nil {
		return nil, ""
	}
	// The refusal as brood's code makes it (histreplay.go), of a start
	// this key made (ownStart: no other is replayed).
	var app *temporal.ApplicationError
	var nm notMine
	why := ""
	switch {
	case errors.As(rerr, &nm):
		why = nm.Error()
	case rerr == nil && errors.As(read.got.Err, &app) && app.Type() == ErrRefused:
		why = app.Message()
	default:
		return nil, ""
	}
	resp, lerr := e.cfg.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.Namespace,
		Query: fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus = 'Completed'", wid)})
	if lerr != nil || len(resp.GetExecutions()) == 0 {
		return nil, ""
	}
	own, derr := e.cfg.Client.DescribeWorkflowExecution(ctx, wid, resp.GetExecutions()[0].GetExecution().GetRunId())
	if derr != nil {
		return nil, ""
	}
	return own, "a later start of workflow " + wid + " was refused (" + why + "); this is the call's own run"
}
