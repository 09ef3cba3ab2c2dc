package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/spawn"
	wf "github.com/broodhq/brood/internal/workflow"
)

// Workflow is a checked plan, ready to approve and run (the CLI's
// workflow.Prepared).
type Workflow interface {
	Name() string
	Describe() string
	Estimate() string
	Warnings() []string
	Run(ctx context.Context, runner call.Runner, events func(wf.Event), started func(runID string)) (*wf.Result, error)
}

// workflowMsg is news of a workflow run: started, a phase's progress, or
// its end.
type workflowMsg struct {
	runID, name string
	event       *wf.Event
	result      *wf.Result
	err         error
}

// runs maps the tasks of workflow runs to their run, so the tree groups
// them under it.
type runs struct {
	mu      sync.Mutex
	taskRun map[string]string
	cancel  map[string]context.CancelFunc
}

func (r *runs) runOf(task string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.taskRun[task]
}

// runNodeID is the tree id of a workflow run.
func runNodeID(runID string) string { return "workflow:" + runID }

// startWorkflow runs an approved plan in the background on the session's
// dispatcher: its agents are this session's children, in the tree under
// the run.
func (e *engine) startWorkflow(w Workflow) error {
	if e.disp == nil {
		return fmt.Errorf("delegation is off here: this process is at the subagent depth cap, so it cannot start a workflow's agents")
	}
	ctx, cancel := context.WithCancel(e.life)
	var mu sync.Mutex
	runID := ""
	// Every dispatch of the run reports here first (before the session's
	// own event sink), so its task is known to belong to the run.
	runner := call.Watched(e.disp, call.Watch{Events: func(ev spawn.Event) {
		mu.Lock()
		id := runID
		mu.Unlock()
		if ev.Type == "dispatch_start" && id != "" {
			e.wf.mu.Lock()
			e.wf.taskRun[ev.TaskID] = id
			e.wf.mu.Unlock()
		}
	}})
	started := func(id string) {
		mu.Lock()
		runID = id
		mu.Unlock()
		e.wf.mu.Lock()
		e.wf.cancel[id] = cancel
		e.wf.mu.Unlock()
		e.send(workflowMsg{runID: id, name: w.Name()})
	}
	events := func(ev wf.Event) { e.send(workflowMsg{runID: ev.RunID, name: w.Name(), event: &ev}) }
	go func() {
		defer cancel()
		res, err := w.Run(ctx, runner, events, started)
		mu.Lock()
		id := runID
		mu.Unlock()
		if res != nil {
			id = res.RunID
		}
		e.send(workflowMsg{runID: id, name: w.Name(), result: res, err: err})
	}()
	return nil
}

// stopWorkflow cancels a run of this session (its agents are stopped in
// stages; brood workflow resume continues it).
func (e *engine) stopWorkflow(runID string) bool {
	e.wf.mu.Lock()
	c := e.wf.cancel[runID]
	e.wf.mu.Unlock()
	if c == nil {
		return false
	}
	c()
	return true
}

// workflowEvent folds a run's news into the tree and the conversation.
func (m *Model) workflowEvent(msg workflowMsg) {
	id := runNodeID(msg.runID)
	now := m.now()
	n := m.tree.nodes[id]
	if n == nil && msg.runID != "" {
		n = &node{id: id, agent: "workflow " + clean(msg.name, false), status: "running", started: now}
		m.tree.nodes[id] = n
		m.tree.roots = append(m.tree.roots, id)
		m.notice(entryNotice, fmt.Sprintf("workflow %s started as run %s (brood workflow show %s)", clean(msg.name, false), msg.runID, msg.runID))
	}
	switch {
	case msg.event != nil && n != nil:
		ev := msg.event
		n.lastTools = []string{fmt.Sprintf("%s: %s (%d done, %d running, %d failed)", clean(ev.Phase, false), clean(ev.Status, false), ev.Done, ev.Running, ev.Failed)}
		n.history = append(n.history, n.lastTools)
	case msg.err != nil:
		m.notice(entryError, "workflow: "+msg.err.Error())
		if n != nil {
			n.status, n.stopped = "failed", now
		}
	case msg.result != nil:
		r := msg.result
		if n != nil {
			n.status, n.stopped, n.usage = clean(r.Status, false), now, r.Usage
			n.summary = fmt.Sprintf("%s: %d agents, %s tokens", r.Status, r.Agents, count(r.Usage.Total()))
			if r.Reason != "" {
				n.summary += "\n" + clean(r.Reason, true)
			}
		}
		m.notice(entryNotice, fmt.Sprintf("workflow run %s %s: %d agents (brood workflow show %s)", r.RunID, r.Status, r.Agents, r.RunID))
	}
}

// workflowCmd is /workflow FILE [name=value ...]: check the plan, then ask
// once, with its agent-count estimate.
func (m *Model) workflowCmd(rest string) {
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		m.notice(entryError, "usage: /workflow FILE [name=value ...]")
		return
	}
	if m.eng.cfg.Workflow == nil {
		m.notice(entryError, "workflows are not available here")
		return
	}
	w, err := m.eng.cfg.Workflow(fields[0], fields[1:])
	if err != nil {
		m.notice(entryError, err.Error())
		return
	}
	text := "workflow " + w.Describe()
	for _, warn := range w.Warnings() {
		text += "\nwarning: " + warn
	}
	m.notice(entryNotice, text)
	m.approval, m.askShown = w, m.now()
}

// approvalKey starts (y) or drops (n) the workflow waiting for approval.
func (m *Model) approvalKey(key string) {
	if m.now().Sub(m.askShown) < askGuard {
		return
	}
	w := m.approval
	switch key {
	case "y":
		m.approval = nil
		if err := m.eng.startWorkflow(w); err != nil {
			m.notice(entryError, err.Error())
		}
	case "n", "esc":
		m.approval = nil
		m.notice(entryNotice, "workflow not started")
	}
}

func approvalText(w Workflow, ready bool) string {
	keys := "y start · n cancel"
	if !ready {
		keys = "(a moment…)"
	}
	return fmt.Sprintf("Start workflow %s: %s?\n%s", clean(w.Name(), false), w.Estimate(), keys)
}
