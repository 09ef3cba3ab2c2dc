package temporal

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/shortid"
	wf "github.com/broodhq/brood/internal/workflow"
)

// resolveCall is the task id of the fleet call q names: q itself when a
// call has that id, else the one call id q is a prefix or a tail of
// (shortid's one rule, as for local tasks), or ErrNotFound.
func (e *Engine) resolveCall(ctx context.Context, q string) (string, error) {
	if dispatch.CheckID(q) == nil {
		if _, err := e.cfg.Client.DescribeWorkflowExecution(ctx, callWorkflowID(q), ""); err == nil {
			return q, nil
		}
	}
	if len(strings.TrimSpace(q)) < 4 || strings.ContainsAny(q, "'\"\\ ") {
		return "", fmt.Errorf("%w: no task %s here nor on the fleet", engine.ErrNotFound, q)
	}
	ids, err := e.callIDs(ctx)
	if err != nil {
		return "", err
	}
	id, err := shortid.Match(q, ids)
	if errors.Is(err, shortid.ErrAmbiguous) {
		return "", fmt.Errorf("on the fleet: %w", err) // name the candidates, never "no task"
	} else if err != nil {
		return "", fmt.Errorf("%w: on the fleet: %v", engine.ErrNotFound, err)
	}
	return id, nil
}

// callIDs lists the task ids of the fleet's calls on this engine's queue
// (a resume's own workflow counts as the task it continues).
func (e *Engine) callIDs(ctx context.Context) ([]string, error) {
	q := fmt.Sprintf("TaskQueue = '%s' AND WorkflowType = '%s'", e.cfg.Queue, CallWorkflowName)
	seen := map[string]bool{}
	var out []string
	var token []byte
	for {
		resp, err := e.cfg.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.Namespace, Query: q, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list the fleet's calls on Temporal: %w", err)
		}
		for _, x := range resp.GetExecutions() {
			id := strings.TrimPrefix(x.GetExecution().GetWorkflowId(), "brood-call-")
			if i := strings.Index(id, "-"); i > 0 {
				id = id[:i]
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// queued is the status of a call no worker has started: whether any worker
// polls its task queue at all.
func (e *Engine) queued(ctx context.Context, queue string) string {
	var pollers [2][]*taskqueuepb.PollerInfo
	for i, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		d, err := e.cfg.Client.DescribeTaskQueue(ctx, queue, typ)
		if err != nil {
			return "queued (waiting for a worker on task queue " + queue + ")"
		}
		pollers[i] = d.GetPollers()
	}
	return queuedWord(queue, pollers[0], pollers[1], time.Now())
}

// queuedWord says why a call waits, from the queue's workflow and activity
// pollers: none of a kind, or none that polled lately of either (every
// worker stopped: the server lists them for minutes), is no worker
// polling; otherwise what is known, never more: when a worker last polled
// the queue and which (a worker whose slots are all busy polls no
// activities but its workflow pollers go on; one that stopped seconds ago
// is still listed, with its last poll growing older).
func queuedWord(queue string, workflow, activity []*taskqueuepb.PollerInfo, now time.Time) string {
	if len(workflow) == 0 || len(activity) == 0 || livePollers(workflow, now)+livePollers(activity, now) == 0 {
		return noWorkerWord(queue)
	}
	var last *taskqueuepb.PollerInfo
	for _, p := range append(slices.Clip(workflow), activity...) {
		if t := p.GetLastAccessTime(); t != nil && (last == nil || t.AsTime().After(last.GetLastAccessTime().AsTime())) {
			last = p
		}
	}
	if last == nil {
		return "queued (waiting for a worker on task queue " + queue + ")"
	}
	ago := max(now.Sub(last.GetLastAccessTime().AsTime()), 0).Round(time.Second)
	by := ""
	if w := printable(last.GetIdentity()); w != "" {
		by = " by " + w
	}
	return fmt.Sprintf("queued (waiting for a worker: last poll of task queue %s %s ago%s)", queue, ago, by)
}

// pollAge is the age of a queue's last poll in a status (queuedWord),
// which grows while nothing changes.
var pollAge = regexp.MustCompile(` [0-9hms.]+ ago( by |\))`)

// sameNews reports whether two progress events say the same, but for
// the age of a queue's last poll.
func sameNews(a, b wf.Event) bool {
	a.Status, b.Status = pollAge.ReplaceAllString(a.Status, "$1"), pollAge.ReplaceAllString(b.Status, "$1")
	return a == b
}

// pollerGone is how long after its last poll the server's poller list
// still names a worker that is gone (it keeps them for minutes), while a
// live worker polls again at least every long poll (a minute at most).
const pollerGone = 2 * time.Minute

// livePollers counts the pollers that polled within pollerGone of now.
func livePollers(pollers []*taskqueuepb.PollerInfo, now time.Time) int {
	n := 0
	for _, p := range pollers {
		if t := p.GetLastAccessTime(); t == nil || now.Sub(t.AsTime()) < pollerGone {
			n++
		}
	}
	return n
}
