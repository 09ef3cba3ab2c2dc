package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/model"
	wf "github.com/broodhq/brood/internal/workflow"
)

// List implements engine.Engine, from Temporal's visibility: every plan
// run in the namespace, newest first (a resumed run once, as its latest
// execution).
func (e *Engine) List(ctx context.Context) ([]engine.RunInfo, error) {
	var out []engine.RunInfo
	seen := map[string]bool{}
	qw := &queueWord{e: e}
	var token []byte
	for {
		resp, err := e.cfg.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.cfg.Namespace, Query: fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s'", PlanWorkflowName, e.cfg.Queue), NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list runs on Temporal: %w", err)
		}
		for _, x := range resp.GetExecutions() {
			id := x.GetExecution().GetWorkflowId()
			if seen[id] || dispatch.CheckID(id) != nil {
				continue
			}
			seen[id] = true
			x, d := e.current(ctx, x)
			info := e.infoOf(x)
			if info.Status == wf.RunRunning && d != nil {
				e.liveInfo(ctx, d, info, qw)
			}
			out = append(out, *info)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// Show implements engine.Engine.
func (e *Engine) Show(ctx context.Context, id string) (*engine.RunInfo, error) {
	d, err := e.describe(ctx, id)
	if err != nil {
		return nil, err
	}
	info := e.infoOf(d.GetWorkflowExecutionInfo())
	switch info.Status {
	case wf.RunRunning:
		// No closed history to replay yet: the counts are what the run's
		// workflow answers its progress query with (whoever runs its
		// workflow tasks), and say so; what the run did is taken from the
		// replay once it ends.
		e.liveInfo(ctx, d, info, &queueWord{e: e})
		info.Reason = joinReason(info.Reason, unchecked)
	default:
		e.showEnded(ctx, id, d, info)
	}
	return info, nil
}

// showEnded fills info, the listing of run id whose latest execution (d)
// has ended, from brood's own replay of the execution's history, never
// the completion result the server holds (histreplay.go); a history that
// does not replay shows no result, and says why.
func (e *Engine) showEnded(ctx context.Context, id string, d *workflowservice.DescribeWorkflowExecutionResponse, info *engine.RunInfo) {
	exec := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	r, err := e.ownRunOutput(ctx, id, exec)
	out := &r.out
	var theirs notMine
	var refused historyRefused
	completed := d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	switch {
	case err != nil && !completed && !errors.As(err, &refused):
		// Ended without a result (cancelled, failed, terminated): nothing
		// to take, and no counts nor usage (the workflow's memo, its
		// completer's word).
		info.Done, info.Failed, info.Agents, info.Calls, info.Usage = 0, 0, 0, nil, model.Usage{}
		return
	case errors.As(err, &theirs):
		// Another key's run (or a forged one): not replayed, so its status
		// is the workflow's own report, unchecked, and says so.
		info.Reason = joinReason(info.Reason, "not replayed: "+err.Error())
		return
	case err != nil:
		// Nothing of the server's word is shown: not its status, counts
		// nor usage (the workflow's memo, its completer's).
		info.Status, info.Reason = wf.RunFailed, whereSaid(info, err.Error())
		info.Done, info.Failed, info.Agents, info.Calls, info.Usage = 0, 0, 0, nil, model.Usage{}
		return
	}
	e.judgeTip(ctx, ownPart(out.Input, r.sub), &r, tipRun(exec, r.sub)) // the checks settleOwn makes, landing nothing
	e.takeRun(ctx, e.runFromOwn(id, exec, out.Input, r.sub), &r)        // only what trusted workers signed (callsig.go), the server's times
	info.Result = out.Result
	if kept := e.keptRun(id); kept != nil {
		info.Result = kept // its status and reason judgeKept's
	} else {
		// The replay's status and reason, never the memo's.
		info.Status, info.Reason = out.Result.Status, whereSaid(info, out.Result.Reason)
		if info.Status == wf.RunDone && info.Origin == "" {
			e.unlanded(ctx, out.Input, info, e.memo(d.GetWorkflowExecutionInfo().GetMemo().GetFields(), memoOrigin, new(Origin)))
		}
	}
	info.Usage = info.Result.Usage
	info.Agents = info.Result.Agents
	info.Calls = wf.CallStatuses(info.Result) // as the local engine's journal counts them
}

// memoWord is what a listing says of a finished run's status when this
// checkout kept no result of it.
const memoWord = "status as its workflow reported it on Temporal, unchecked: brood workflow show "

// unchecked is what workflow show says of a running run's progress.
const unchecked = "progress as the run's workflow reports it, unchecked until the run ends"

// keptRun is the run's result as its submitter kept it in this project,
// with what became of its tree here (nil: none kept here).
func (e *Engine) keptRun(id string) *wf.Result {
	file := e.keptResult(id)
	if file == "" {
		return nil
	}
	var res wf.Result
	if dispatch.ReadJSON(file, &res) != nil || res.RunID != id {
		return nil
	}
	return &res
}

// judgeKept gives a finished run's listing its submitter's verdict (its
// tree did not land: not done) and counts.
func (e *Engine) judgeKept(info *engine.RunInfo) {
	res := e.keptRun(info.RunID)
	if res == nil {
		// The workflow's memo: whoever completed its workflow tasks wrote
		// it (workflow show replays the run's history).
		info.Reason = joinReason(info.Reason, memoWord+info.RunID+" checks it")
		return
	}
	info.Status, info.Reason, info.Agents = res.Status, res.Reason, res.Agents
	info.Usage, info.Calls = res.Usage, wf.CallStatuses(res)
	info.Done, info.Failed = 0, 0
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			switch {
			case c.Output != nil:
				info.Done++
			case c.Status != wf.CallCancelled && c.TaskID != "":
				info.Failed++ // one that started: a skipped call is not failed, as the local engine's journal says
			}
		}
	}
}

// unlanded says on a finished run's listing what became of its tree in
// this repository when no submitter kept its result here (it died before
// the landing): kept (not applied: the run is judged as its submitter
// would have), or waiting for a resume to land it. mine: the run records
// this checkout as its origin (one from before origins were recorded may
// be another checkout's, so it is not said to be missing here).
func (e *Engine) unlanded(ctx context.Context, in RunInput, info *engine.RunInfo, mine bool) {
	if in.Code == nil || in.Tip == nil || in.Tip.Tree == in.Code.Tree || e.cfg.Code == nil {
		return
	}
	rec, err := e.readLanded(ctx, in.RunID)
	if err != nil || rec != nil && rec.Done == in.Tip.Tree {
		return
	}
	if rec != nil && rec.Kept == in.Tip.Tree {
		res := *info.Result
		res.Phases = append([]wf.PhaseResult(nil), res.Phases...)
		for i := range res.Phases {
			res.Phases[i].Calls = append([]wf.CallRecord(nil), res.Phases[i].Calls...)
		}
		res.Landed = rec.Message
		res.NotLanded(strings.TrimPrefix(rec.Message, "fleet: "))
		info.Result, info.Status, info.Reason = &res, res.Status, res.Reason
		return
	}
	if !mine {
		info.Reason = joinReason(info.Reason, "its change has not been landed in this checkout: if it was submitted from here, brood workflow resume "+in.RunID+" lands it")
		return
	}
	info.Reason = joinReason(info.Reason, "its change is not in your tree yet: brood workflow resume "+in.RunID+" lands it")
}

// whereSaid is reason with where the run was submitted from, when that is
// another checkout (elsewhere).
func whereSaid(info *engine.RunInfo, reason string) string {
	if info.Origin == "" {
		return reason
	}
	return joinReason(reason, "submitted from "+info.Origin+": its change lands there, not in this checkout")
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// current is x as the server has it now, with its description (nil: x
// is not running). Visibility is eventually consistent: a run that has
// just ended may still be listed running (with the memo of its start), so
// a row listed running is described, which reads the execution's own
// state. On any error the listed row stands.
func (e *Engine) current(ctx context.Context, x *workflowpb.WorkflowExecutionInfo) (*workflowpb.WorkflowExecutionInfo, *workflowservice.DescribeWorkflowExecutionResponse) {
	if x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return x, nil
	}
	d, err := e.cfg.Client.DescribeWorkflowExecution(ctx, x.GetExecution().GetWorkflowId(), x.GetExecution().GetRunId())
	if err != nil || d.GetWorkflowExecutionInfo() == nil {
		return x, nil
	}
	return d.GetWorkflowExecutionInfo(), d
}

// liveInfo fills a running plan's listing from its progress and its
// pending calls: running counts the calls a worker runs, the status is
// queued (with why) while none does, and agents are the calls handed out
// so far.
func (e *Engine) liveInfo(ctx context.Context, d *workflowservice.DescribeWorkflowExecutionResponse, info *engine.RunInfo, qw *queueWord) {
	info.Status = e.liveStatus(ctx, d, qw)
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	x := d.GetWorkflowExecutionInfo().GetExecution()
	v, err := e.cfg.Client.QueryWorkflow(qctx, x.GetWorkflowId(), x.GetRunId(), ProgressQuery)
	var p Progress
	if err != nil || v.Get(&p) != nil {
		return
	}
	info.Done, info.Failed, info.Running, info.Agents = 0, 0, 0, 0
	for _, ev := range p.Events {
		info.Agents += ev.Done + ev.Failed + ev.NotApplied + ev.Cancelled + ev.Running
	}
	started, _ := agentSlots(d)
	splitRunning(p.Events, started, max(chaining(d), p.Chaining))
	calls := map[string]int{}
	for _, ev := range p.Events {
		info.Done += ev.Done
		info.Failed += ev.Failed + ev.NotApplied
		info.Running += ev.Running + ev.Chaining
		for st, n := range map[string]int{wf.CallDone: ev.Done, "failed": ev.Failed, wf.CallNotApplied: ev.NotApplied,
			wf.CallCancelled: ev.Cancelled, wf.RunRunning: ev.Running, "landing": ev.Landing, "chaining": ev.Chaining} {
			if n > 0 {
				calls[st] += n
			}
		}
	}
	info.Calls = calls
}

// infoOf is a run's listing from its execution info and memo.
func (e *Engine) infoOf(x *workflowpb.WorkflowExecutionInfo) *engine.RunInfo {
	id := x.GetExecution().GetWorkflowId()
	info := &engine.RunInfo{RunID: id, Engine: e.Name(), Created: x.GetStartTime().AsTime().UTC(),
		ResultRef: fmt.Sprintf("temporal:%s/%s", e.cfg.Namespace, id)}
	if kept := e.keptResult(id); kept != "" {
		info.ResultRef = kept // the submitter's copy, where the local engine keeps it
	}
	memo := x.GetMemo().GetFields()
	e.memo(memo, memoPlan, &info.Plan)
	e.memo(memo, memoSource, &info.Source)
	if o, ok := e.foreign(memo); ok {
		defer elsewhere(info, o) // after judgeKept
	}
	switch x.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		info.Status = wf.RunRunning
		return info
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		info.Status = wf.RunDone
		e.memo(memo, memoStatus, &info.Status)
		e.memo(memo, memoReason, &info.Reason)
		defer e.judgeKept(info)
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		info.Status, info.Reason = wf.RunCancelled, "cancelled on Temporal; continue it with brood workflow resume "+id
	default:
		info.Status = wf.RunFailed
		info.Reason = "the workflow ended " + x.GetStatus().String() + " on Temporal"
	}
	e.memo(memo, memoAgents, &info.Agents)
	e.memo(memo, memoDone, &info.Done)
	e.memo(memo, memoFailed, &info.Failed)
	e.memo(memo, memoUsage, &info.Usage)
	e.memo(memo, memoCalls, &info.Calls)
	var fin time.Time
	if e.memo(memo, memoFinished, &fin) {
		info.Finished = &fin
	} else if ct := x.GetCloseTime(); ct != nil {
		t := ct.AsTime().UTC()
		info.Finished = &t
	}
	return info
}

// elsewhere says on a listing that the run belongs to another checkout:
// its change lands there, and its resume runs there.
func elsewhere(info *engine.RunInfo, o Origin) {
	info.Origin = o.String()
	where := "submitted from " + o.String() + ": its change lands there, not in this checkout"
	if info.Status == wf.RunCancelled {
		info.Reason = "cancelled on Temporal; " + where + " (brood workflow resume " + info.RunID + " continues it there)"
		return
	}
	info.Reason = joinReason(info.Reason, where)
}

func (e *Engine) memo(m map[string]*commonpb.Payload, key string, v any) bool {
	p, ok := m[key]
	return ok && e.cfg.DataConverter.FromPayload(p, v) == nil
}

// FleetTask is one call or run on the fleet, as `brood tasks` lists it.
type FleetTask struct {
	// ID is the task id of a call (brood subagent --engine temporal), the
	// run id of a plan.
	ID          string    `json:"id"`
	Kind        string    `json:"kind"` // call | plan
	Agent       string    `json:"agent,omitempty"`
	Status      string    `json:"status"`
	Description string    `json:"description,omitempty"`
	Created     time.Time `json:"created"`
	// Unchecked: Status is what the task's workflow reported (its memo,
	// whose writer is whoever completed its workflow tasks), not taken
	// from a replay nor from a result this checkout kept: brood tasks
	// show (a call) or brood workflow show (a run) checks it.
	Unchecked bool `json:"unchecked,omitempty"`
}

// Tasks lists the fleet's calls and plan runs on this engine's queue,
// newest first.
func (e *Engine) Tasks(ctx context.Context) ([]FleetTask, error) {
	var out []FleetTask
	var token []byte
	q := fmt.Sprintf("TaskQueue = '%s' AND (WorkflowType = '%s' OR WorkflowType = '%s')", e.cfg.Queue, CallWorkflowName, PlanWorkflowName)
	seen := map[string]bool{}
	qw := &queueWord{e: e}
	for {
		resp, err := e.cfg.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.Namespace, Query: q, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list the fleet's tasks on Temporal: %w", err)
		}
		for _, x := range resp.GetExecutions() {
			wid := x.GetExecution().GetWorkflowId()
			if seen[wid] {
				continue
			}
			seen[wid] = true
			x, d := e.current(ctx, x)
			info := e.infoOf(x)
			if info.Status == wf.RunRunning && d != nil {
				info.Status = e.liveStatus(ctx, d, qw)
			}
			ft := FleetTask{ID: wid, Kind: "plan", Status: info.Status, Description: info.Plan, Created: info.Created}
			ended := x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
			ft.Unchecked = ended
			if kept := e.keptRun(wid); kept != nil && ended && x.GetType().GetName() == PlanWorkflowName {
				ft.Status, ft.Unchecked = kept.Status, false // as its submitter kept it here
			}
			if x.GetType().GetName() == CallWorkflowName {
				ft.Kind = "call"
				ft.ID = strings.TrimPrefix(wid, "brood-call-")
				if i := strings.Index(ft.ID, "-"); i > 0 {
					ft.ID = ft.ID[:i] // a resume's own workflow: the task it continues
				}
				e.memo(x.GetMemo().GetFields(), memoAgent, &ft.Agent)
				ft.Description = info.Source
				if ft.Status == wf.CallDone && e.callKept(ctx, ft.ID, x.GetExecution().GetRunId()) {
					ft.Status, ft.Unchecked = wf.CallNotApplied, false // its submitter's own word: it kept the change
				}
			}
			out = append(out, ft)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}
