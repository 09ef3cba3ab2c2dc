package hooks

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/broodhq/brood/internal/dispatch"
)

// SubagentEvent is a dispatch's start or stop as the root process learns
// it: from its own dispatcher, or relayed by a child for a grandchild (then
// Via names that child, and everything else is the child's word: data).
type SubagentEvent struct {
	Start        bool
	TaskID       string
	ParentTaskID string
	Via          string
	Agent        string
	Description  string
	Depth        int
	Status       string
	KilledBy     string
}

// maxNested bounds the subagents one direct child may report below it, so
// that a hostile child cannot make the root run hooks without end.
const maxNested = 256

// Subagents pairs SubagentStart and SubagentStop: exactly one stop for each
// start, also when a subagent was killed, its parent died, or this process
// dies (then a later brood process fires it: see LateStops). Events are
// queued and their hooks run in order on one goroutine, so that no
// dispatcher or child's stdout reader waits for a hook.
type Subagents struct {
	s       *Session
	records string // the markers' directory (parent-owned records)
	project string

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []SubagentEvent
	closed bool
	done   chan struct{}

	open   map[string]*openSub // worker goroutine only
	counts map[string]int      // nested subagents per direct child (worker only)
}

type openSub struct {
	m   *marker
	key string
	top string // the direct child it belongs to (itself for a direct child)
}

// Subagents starts the pairing of this session's subagents; their markers
// live in recordsDir. It returns nil when no Subagent hook is configured.
func (s *Session) Subagents(projectRoot, recordsDir string) *Subagents {
	if s == nil || !(s.r.Has(SubagentStart) || s.r.Has(SubagentStop)) {
		return nil
	}
	t := &Subagents{s: s, records: recordsDir, project: projectRoot, done: make(chan struct{}),
		open: map[string]*openSub{}, counts: map[string]int{}}
	t.cond = sync.NewCond(&t.mu)
	go t.work()
	return t
}

// Observe queues ev; it never blocks on a hook.
func (t *Subagents) Observe(ev SubagentEvent) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.queue = append(t.queue, ev)
	t.cond.Signal()
}

// Close waits for every queued event's hooks, then fires a stop for any
// subagent still open (its stop never reached this process).
func (t *Subagents) Close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.closed = true
	t.cond.Signal()
	t.mu.Unlock()
	<-t.done
}

func (t *Subagents) work() {
	defer close(t.done)
	ctx := context.Background()
	for {
		t.mu.Lock()
		for len(t.queue) == 0 && !t.closed {
			t.cond.Wait()
		}
		if len(t.queue) == 0 {
			t.mu.Unlock()
			break
		}
		ev := t.queue[0]
		t.queue = t.queue[1:]
		t.mu.Unlock()
		if ev.Start {
			t.start(ctx, ev)
		} else {
			t.stop(ctx, ev)
		}
	}
	for id := range t.open {
		t.stop(ctx, SubagentEvent{TaskID: id, Status: dispatch.StatusKilled, KilledBy: "parent"})
	}
}

func (t *Subagents) start(ctx context.Context, ev SubagentEvent) {
	if !validID(ev.TaskID) || t.open[ev.TaskID] != nil {
		return
	}
	top := ev.TaskID
	if ev.Via != "" {
		// A grandchild, in the word of the child that relayed it: only
		// below that child, and only so many.
		p := t.open[ev.ParentTaskID]
		if p == nil || p.top != ev.Via || t.counts[ev.Via] >= maxNested {
			return
		}
		top = ev.Via
		t.counts[ev.Via]++
	}
	m := &marker{
		Common:  t.s.base(SubagentStart),
		Info:    SubagentInfo{TaskID: ev.TaskID, ParentTaskID: ev.ParentTaskID, Depth: ev.Depth, Description: ev.Description},
		TaskDir: dispatch.Dir(t.project, ev.TaskID),
		Owner:   ownerOf(),
		Parent:  ev.ParentTaskID,
	}
	m.Common.AgentID, m.Common.AgentType = ev.TaskID, ev.Agent
	key, err := claimStart(t.records, m)
	if err != nil {
		t.s.r.reportLine("SubagentStart for " + ev.TaskID + ": cannot record it, so its stop could not be guaranteed: " + err.Error())
		return
	}
	t.open[ev.TaskID] = &openSub{m: m, key: key, top: top}
	in := SubagentStartInput{Common: m.Common, Brood: &m.Info}
	// Claude Code's SubagentStart carries neither of these.
	in.Common.PermissionMode, in.Common.Effort = "", nil
	t.s.r.Fire(ctx, SubagentStart, ev.Agent, in)
}

func (t *Subagents) stop(ctx context.Context, ev SubagentEvent) {
	o := t.open[ev.TaskID]
	if o == nil {
		return
	}
	// Its own subagents end with it (a killed child's tree is killed with
	// it); any whose stop never came are closed first.
	for id, d := range t.open {
		if id != ev.TaskID && t.below(d, ev.TaskID) {
			t.stop(ctx, SubagentEvent{TaskID: id, Status: dispatch.StatusKilled, KilledBy: "parent"})
		}
	}
	delete(t.open, ev.TaskID)
	if !claimStop(t.records, o.key) {
		return // a later process fired it already
	}
	info := o.m.Info
	info.Status, info.KilledBy = ev.Status, ev.KilledBy
	t.s.r.Fire(ctx, SubagentStop, o.m.Common.AgentType, t.s.stopInput(o.m, info))
}

// below reports whether d is somewhere under the open subagent id.
func (t *Subagents) below(d *openSub, id string) bool {
	for p, n := d.m.Parent, 0; p != "" && n < 64; n++ {
		if p == id {
			return true
		}
		o := t.open[p]
		if o == nil {
			return false
		}
		p = o.m.Parent
	}
	return false
}

// stopInput builds SubagentStop's payload from the start's marker and what
// the subagent's records say (data: a summary, never an instruction).
func (s *Session) stopInput(m *marker, info SubagentInfo) SubagentStopInput {
	in := SubagentStopInput{
		Common: m.Common, AgentTranscriptPath: filepath.Join(m.TaskDir, dispatch.SessionFile),
		BackgroundTasks: s.background(), SessionCrons: []any{},
	}
	in.Common.HookEventName = SubagentStop
	var res dispatch.Result
	if dispatch.ReadJSON(filepath.Join(m.TaskDir, dispatch.ResultFile), &res) == nil && res.TaskID == info.TaskID {
		in.LastAssistantMessage = res.Summary
		if info.Status == "" || info.Late {
			info.Status = res.Status
		}
	}
	if info.Status == "" {
		info.Status = dispatch.StatusKilled
	}
	in.Brood = &info
	return in
}

func (r *Runner) reportLine(s string) {
	r.report(Result{Failures: []string{s}})
}
