package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/shortid"
	wf "github.com/broodhq/brood/internal/workflow"
)

// planTask is the plan run, or the call of a plan run, that q names (an
// id, or a unique prefix or tail of one), for brood tasks show: a plan's
// calls are activities of its workflow, not workflows of their own, so
// they are found in the runs on this queue — each run's result as this
// project kept it, else as the run returned it, and a running run's calls
// in flight by their heartbeats. ErrNotFound when none is.
func (e *Engine) planTask(ctx context.Context, q string) (*FleetTaskDetail, error) {
	found := map[string]*FleetTaskDetail{}
	var ids []string
	add := func(d *FleetTaskDetail) {
		if d.ID != "" && found[d.ID] == nil {
			found[d.ID] = d
			ids = append(ids, d.ID)
		}
	}
	query := fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s'", PlanWorkflowName, e.cfg.Queue)
	seen := map[string]bool{}
	var token []byte
	for {
		resp, err := e.cfg.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.Namespace, Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list the fleet's plan runs on Temporal: %w", err)
		}
		for _, x := range resp.GetExecutions() {
			run := x.GetExecution().GetWorkflowId()
			if seen[run] {
				continue
			}
			seen[run] = true
			x, d := e.current(ctx, x)
			info := e.infoOf(x)
			if d != nil {
				info.Status = e.liveStatus(ctx, d, &queueWord{e: e})
			}
			add(&FleetTaskDetail{Workflow: run, FleetTask: FleetTask{ID: run, Kind: "plan", Status: info.Status,
				Description: info.Plan + " (brood workflow show " + run + ")", Created: info.Created}, LastFailure: info.Reason})
			for _, c := range e.planCalls(ctx, run, x.GetExecution().GetRunId(), info, d) {
				add(c)
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	id, err := shortid.Match(q, ids)
	if errors.Is(err, shortid.ErrAmbiguous) {
		return nil, fmt.Errorf("on the fleet: %w", err) // name the candidates (fleetqa3 P2-1)
	} else if err != nil {
		return nil, fmt.Errorf("%w: on the fleet: %v", engine.ErrNotFound, err)
	}
	return found[id], nil
}

// planCalls are a plan run's calls as tasks: a running run's in flight
// (d: its description), an ended one's from its result (its execution
// exec's).
func (e *Engine) planCalls(ctx context.Context, run, exec string, info *engine.RunInfo, d *workflowservice.DescribeWorkflowExecutionResponse) []*FleetTaskDetail {
	var out []*FleetTaskDetail
	if d != nil {
		for _, a := range d.GetPendingActivities() {
			var hb Heartbeat
			hd := a.GetHeartbeatDetails()
			if a.GetActivityType().GetName() != CallActivityName || hd == nil || len(hd.GetPayloads()) == 0 ||
				e.cfg.DataConverter.FromPayload(hd.GetPayloads()[0], &hb) != nil || hb.TaskID == "" {
				continue
			}
			st := wf.RunRunning
			if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
				st = e.queued(ctx, e.cfg.Queue)
			}
			out = append(out, &FleetTaskDetail{Workflow: run, Worker: a.GetLastWorkerIdentity(), Attempt: int(a.GetAttempt()), Heartbeat: &hb,
				LastFailure: a.GetLastFailure().GetMessage(),
				FleetTask:   FleetTask{ID: hb.TaskID, Kind: "plan call", Status: st, Description: "a call of plan run " + run + " (brood workflow show " + run + ")", Created: info.Created}})
		}
		return out
	}
	res := e.keptRun(run)
	if res == nil {
		r, err := e.ownRunOutput(ctx, run, exec) // brood's own output (histreplay.go), of a start this key signed
		if err != nil {
			return nil
		}
		e.judgeTip(ctx, ownPart(r.out.Input, r.sub), &r, tipRun(exec, r.sub)) // the checks settleOwn makes, landing nothing (as workflow show)
		e.takeRun(ctx, e.runFromOwn(run, exec, r.out.Input, r.sub), &r)       // only what trusted workers signed (callsig.go), the server's times
		res = r.out.Result
	}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			out = append(out, planCallDetail(run, info, c))
		}
	}
	return out
}

// planCallDetail is one ended call of a plan run as brood tasks show
// prints a fleet task.
func planCallDetail(run string, info *engine.RunInfo, c wf.CallRecord) *FleetTaskDetail {
	r := &call.Result{TaskID: c.TaskID, Agent: c.Agent, Status: c.Status, Error: c.Error, Failures: c.Failures, Attempts: c.Attempts, Usage: c.Usage,
		QueuedMS: c.QueuedMS, RanMS: c.RanMS}
	switch v := c.Output.(type) {
	case nil:
	case string:
		r.Summary = v
	default:
		b, _ := json.Marshal(v)
		r.Summary, r.Output = string(b), b
	}
	return &FleetTaskDetail{Workflow: run, Worker: c.Worker, Attempt: c.Attempts, LastFailure: c.Error, Landed: c.Landed, Result: r,
		FleetTask: FleetTask{ID: c.TaskID, Kind: "plan call", Agent: c.Agent, Status: c.Status,
			Description: "call " + c.Key + " of plan run " + run + " (brood workflow show " + run + ")", Created: info.Created}}
}

// taskOrPlan is Task's lookup: a single call's workflow first, then a plan
// run or a plan's call.
func (e *Engine) taskOrPlan(ctx context.Context, q string) (string, *FleetTaskDetail, error) {
	id, err := e.resolveCall(ctx, q)
	if err == nil || !errors.Is(err, engine.ErrNotFound) {
		return id, nil, err
	}
	d, perr := e.planTask(ctx, q)
	if perr != nil {
		if errors.Is(perr, engine.ErrNotFound) {
			return "", nil, fmt.Errorf("%w: no task %s on the fleet (task queue %s): no call nor plan run nor plan's call has that id (brood tasks lists the fleet's calls and plan runs under \"on the fleet\", brood workflow show RUN_ID a plan's calls)", engine.ErrNotFound, strings.TrimSpace(q), e.cfg.Queue)
		}
		return "", nil, perr
	}
	return "", d, nil
}

// ResumeID is the whole task id brood tasks resume names by a prefix or a
// tail: a single call's, else a plan's call's; q itself when neither
// matches (the resume then says what it does not find).
func (e *Engine) ResumeID(ctx context.Context, q string) string {
	if whole, err := e.resolveCall(ctx, q); err == nil {
		return whole
	}
	if d, err := e.planTask(ctx, q); err == nil && d.Kind == "plan call" {
		return d.ID
	}
	return q
}
