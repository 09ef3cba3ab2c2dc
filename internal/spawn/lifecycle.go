package spawn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/taskdir"
)

// background is one child running detached from the Task call that started it.
type background struct {
	agent  string
	done   chan struct{}
	out    *call.Result
	cancel context.CancelFunc // Stop
}

// bgState is the dispatcher's record of its background children and the
// notices about them that have not reached the model yet.
type bgState struct {
	mu      sync.Mutex
	tasks   map[string]*background
	notices []string
	wg      sync.WaitGroup
}

// Start runs a call in the background and returns its task id at once:
// the same pipeline as Call (call.Go), so its limits are lowered and its
// schema retried as a waited-for call's are. The child counts against the
// pool like any other. It runs under the dispatcher's lifetime context,
// not ctx: it outlives the Task call but not the process (see
// SetLifetime). A refusal is an error, before anything is written.
func (d *Dispatcher) Start(ctx context.Context, s call.Spec) (string, error) {
	s.Background = true
	return d.goCall(ctx, s)
}

// goCall starts s through call.Go and keeps the handle: its notice, its
// TaskOutput, its Stop.
func (d *Dispatcher) goCall(ctx context.Context, s call.Spec) (string, error) {
	life, cancel := context.WithCancel(d.lifetime())
	h, err := call.Go(ctx, life, d, d.cfg.Extras.Schemas, s)
	if err != nil {
		cancel()
		return "", err
	}
	id, agent := h.TaskID(), h.Agent()
	b := &background{agent: agent, done: make(chan struct{}), cancel: cancel}
	d.bg.mu.Lock()
	if d.bg.tasks == nil {
		d.bg.tasks = map[string]*background{}
	}
	d.bg.tasks[id] = b
	d.bg.mu.Unlock()
	d.bg.wg.Add(1)
	go func() {
		defer d.bg.wg.Done()
		defer cancel()
		<-h.Done()
		r := h.Result()
		late := d.undeliveredNote(id) // inbox.go
		d.bg.mu.Lock()
		b.out = r
		d.bg.notices = append(d.bg.notices, fmt.Sprintf(
			"[brood] Background task %s (%s) finished with status %s. Call TaskOutput with task_id=%q to read its result.%s",
			id, agent, r.Status, id, late))
		d.bg.mu.Unlock()
		close(b.done)
		d.emit(Event{Type: "background_done", TaskID: id, Agent: agent, Depth: d.cfg.Depth + 1, Status: r.Status})
	}()
	return id, nil
}

func (d *Dispatcher) lifetime() context.Context {
	d.bg.mu.Lock()
	defer d.bg.mu.Unlock()
	if d.cfg.Lifetime != nil {
		return d.cfg.Lifetime
	}
	return context.Background()
}

// Notices drains the notices about background children that finished since
// the last call. An agent loop polls it at every turn boundary.
func (d *Dispatcher) Notices() []string {
	d.bg.mu.Lock()
	defer d.bg.mu.Unlock()
	n := d.bg.notices
	d.bg.notices = nil
	return n
}

// Running lists the background children still running.
func (d *Dispatcher) Running() []string {
	d.bg.mu.Lock()
	defer d.bg.mu.Unlock()
	var ids []string
	for id, b := range d.bg.tasks {
		select {
		case <-b.done:
		default:
			ids = append(ids, id)
		}
	}
	return ids
}

// Finished is the result of a background call this dispatcher ran, once it
// has ended (nil: still running, or not one of this dispatcher's).
func (d *Dispatcher) Finished(id string) *call.Result {
	d.bg.mu.Lock()
	defer d.bg.mu.Unlock()
	if b := d.bg.tasks[id]; b != nil {
		return b.out
	}
	return nil
}

// WaitBackground blocks until every background child has finished. Cancel
// the dispatcher's lifetime context to stop them instead: each then ends
// with status cancelled and a resume handle, so nothing is orphaned and
// nothing is lost.
func (d *Dispatcher) WaitBackground() { d.bg.wg.Wait() }

// Output returns a task's status and, once it has finished, its verified and
// wrapped result. It waits up to wait for a running task to finish. Tasks of
// this process are watched directly; others (an earlier process, another
// parent) are read from their records on disk.
func (d *Dispatcher) Output(ctx context.Context, id string, wait time.Duration) (status, text string, err error) {
	d.bg.mu.Lock()
	b := d.bg.tasks[id]
	d.bg.mu.Unlock()
	if b != nil {
		select {
		case <-b.done:
			return b.out.Status, b.out.Text, nil
		default:
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-b.done:
			return b.out.Status, b.out.Text, nil
		case <-t.C:
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
		select {
		case <-b.done:
			return b.out.Status, b.out.Text, nil
		default:
		}
		return dispatch.StatusRunning, d.runningText(id, b.agent), nil
	}
	deadline := time.Now().Add(wait)
	for {
		t, err := d.finder().Load(id)
		if err != nil {
			return "", "", err
		}
		if t.Status != dispatch.StatusRunning {
			return t.Status, renderTask(t), nil
		}
		if !time.Now().Before(deadline) {
			return t.Status, d.runningText(id, t.Agent), nil
		}
		// Another process owns this child; its records are all we have.
		timer := time.NewTimer(min(250*time.Millisecond, time.Until(deadline)))
		select {
		case <-ctx.Done():
			timer.Stop()
			return "", "", ctx.Err()
		case <-timer.C:
		}
	}
}

func (d *Dispatcher) runningText(id, agent string) string {
	return fmt.Sprintf("Task %s (%s) is still running. Call TaskOutput again with wait_seconds to wait for it, or SendMessage to steer it (from a shell: brood tasks output %s --wait, brood tasks send %s \"...\").", id, agent, id, id)
}

// renderTask renders a finished task from its records, as its parent
// judged it: the verdict's status and reasons, and a warning when
// result.json is not the file the parent judged. A rejected result never
// reads as trusted from another process.
func renderTask(t *dispatch.Task) string {
	td := t.Files()
	res, fails, readErr := dispatch.VerifyDir(td, dispatch.Expect{TaskID: t.ID, Agent: t.Agent})
	if readErr != nil {
		fails = nil
	}
	if v := t.Verdict; v != nil {
		fails = append(slices.Clone(v.Reasons), fails...)
	}
	if t.Trust == dispatch.TrustRejected && t.Verdict != nil && t.Verdict.ResultSHA256 != "" && t.Verdict.ResultSHA256 != t.ResultHash() {
		fails = append(fails, "result.json changed after its parent judged it: this is not the result it accepted")
	}
	if res == nil {
		if t.Result == nil || readErr != nil {
			why := t.Note
			if t.Verdict != nil && t.Verdict.Error != "" {
				why = t.Verdict.Error
			}
			return fmt.Sprintf("Task %s (%s) has status %s and no readable result: %s. Resume it with Task resume_task_id=%q.", t.ID, t.Agent, t.Status, why, t.ID)
		}
		res = t.Result
	}
	shown := *res
	shown.Agent, shown.Status = t.Agent, t.Status // the parent's account, not the child's
	if v := t.Verdict; v != nil && v.FilesChanged != nil {
		shown.FilesChanged = v.FilesChanged // its walks or patch, not the child's claim
	}
	if t.Verdict != nil && t.Verdict.Error != "" {
		shown.Error = t.Verdict.Error
	}
	if t.Trust == dispatch.TrustUnjudged && t.Result != nil {
		fails = append(fails, "no verdict of its parent: this result was never verified (recorded by an older brood, or its parent stopped first)")
	}
	if (len(fails) > 0 || t.Status == dispatch.StatusRejected) && shown.ResumeHandle == "" {
		shown.ResumeHandle = t.ID
	}
	var dur time.Duration
	if t.Output != nil {
		dur = time.Duration(t.Output.WallMS) * time.Millisecond
	}
	limit := 0
	if t.Envelope != nil {
		limit = t.Envelope.InlineLimit
	}
	return dispatch.View{
		Result: &shown, Duration: dur, ResultPath: td.File(taskdir.Result),
		Transcript: td.File(taskdir.Session), Verification: fails, InlineLimit: limit,
		SummaryPath: summaryCopy(t), Concerns: concernsOf(t),
	}.Render()
}

// summaryCopy is the plain-text copy of a long summary its parent wrote in
// its own records (dispatch.WriteSummary), "" when there is none: the cut
// note then names it rather than result.json, which is one JSON line.
func summaryCopy(t *dispatch.Task) string {
	if t.Records() == nil {
		return ""
	}
	p := filepath.Join(t.Records().Path(), t.ID+".summary.md")
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
}

// concernsOf is what the parent's edge guardrails found, from its verdict.
func concernsOf(t *dispatch.Task) []string {
	if t.Verdict == nil {
		return nil
	}
	return t.Verdict.Concerns
}

// ResumeBackground continues an earlier task in the background with a
// follow-up prompt (Call with Spec.Resume, waited for, is the same in the
// foreground): same directory, same transcript (appended), a fresh turn
// budget. It works from the records alone, so it works after the parent
// that started the task was killed. A running task or an unknown id is an
// error.
func (d *Dispatcher) ResumeBackground(ctx context.Context, id, prompt string) error {
	_, err := d.goCall(ctx, call.Spec{Resume: id, Prompt: prompt})
	return err
}

// resumption is a resume that may run: its task as loaded and its owner
// record (call.StageAcquire).
type resumption struct {
	t      *dispatch.Task
	own    *dispatch.Owner
	prompt string
}

// busyError is a resume refused because the task is queued or running: its
// message as it is, and errors.Is dispatch.ErrTaskBusy (a fleet worker's
// retry waits for the earlier child instead of failing the call).
type busyError string

func (e busyError) Error() string        { return string(e) }
func (e busyError) Is(target error) bool { return target == dispatch.ErrTaskBusy }

// acquireResume checks that task id may be resumed from here with prompt.
func (d *Dispatcher) acquireResume(id, prompt string) (*resumption, error) {
	if err := dispatch.CheckID(id); err != nil {
		return nil, fmt.Errorf("cannot resume: %w", err)
	}
	if !d.CanDelegate() {
		return nil, fmt.Errorf("cannot resume task %s: this agent is at depth %d and the tree-wide cap is %d (maxSubagentDepth)", id, d.cfg.Depth, d.cfg.MaxDepth)
	}
	t, err := d.finder().Load(id)
	if err != nil {
		return nil, fmt.Errorf("cannot resume: %w", err)
	}
	if prompt = rejectedFollowUp(t, prompt); strings.TrimSpace(prompt) == "" {
		return nil, errors.New("resuming needs a follow-up prompt: say what the subagent should do next")
	}
	if t.Status == dispatch.StatusRunning || t.Status == dispatch.StatusQueued {
		return nil, busyError(fmt.Sprintf("task %s (%s) is still %s: wait for it with TaskOutput or steer it with SendMessage (from a shell: brood tasks output %s --wait, brood tasks send %s \"...\")", id, t.Agent, t.Status, id, id))
	}
	// What the task is comes from the parent's own record, which no
	// sandboxed child can write; the envelope in the task directory can.
	own, err := dispatch.ReadOwner(*d.cfg.Owners, id)
	if errors.Is(err, taskdir.ErrNotYours) {
		return nil, fmt.Errorf("cannot resume task %s: %w", id, err)
	}
	if err != nil || own.TaskID != id {
		if t.Parent != "" {
			return nil, fmt.Errorf("cannot resume task %s from here: it was dispatched by the subagent task %s, which alone may resume it; resume %s instead", id, t.Parent, t.Parent)
		}
		return nil, fmt.Errorf("cannot resume task %s: its owner record %s is missing or unreadable", id, d.cfg.Owners.OwnerPath(id))
	}
	if d.cfg.Allowed != nil && !allowed(d.cfg.Allowed, own.Agent) {
		return nil, fmt.Errorf("task %s is a %s task, outside this agent's delegation scope (%s)", id, own.Agent, strings.Join(d.cfg.Allowed, ", "))
	}
	return &resumption{t: t, own: own, prompt: prompt}, nil
}

// prepareResumed takes a resumed task's lock and writes its records once,
// its limits lowered to lim, its trace context tp (when set) and whether
// it waits at turn boundaries (syncTurns) included (call.StagePrepare).
func (d *Dispatcher) prepareResumed(rs *resumption, lim call.Limits, tp string, syncTurns bool) (*job, error) {
	t, own, prompt, id := rs.t, rs.own, rs.prompt, rs.own.TaskID
	td := t.Files()
	unlock, err := dispatch.LockDir(td)
	if err != nil {
		return nil, fmt.Errorf("cannot resume task %s: %w", id, err)
	}
	env, prio, err := d.resumeEnvelope(own, t.Envelope)
	if err != nil {
		unlock()
		return nil, err
	}
	if own.Version == 0 {
		// An owner record of an older brood: migrated on first use, so the
		// next resume and every listing have the model and depth it runs
		// at now (nothing it recorded is dropped).
		up := *own
		up.Model, up.Effort, up.Depth, up.Workspace = env.Model, env.Effort, env.Depth, env.Workspace
		up.ParentTaskID, up.SourceAgent, up.Created = env.ParentTaskID, env.SourceAgent, env.Created
		if err := dispatch.WriteOwner(*d.cfg.Owners, up); err != nil {
			unlock()
			return nil, fmt.Errorf("cannot resume task %s: migrate its owner record: %w", id, err)
		}
	}
	turns := 0
	if t.Result != nil {
		turns = t.Result.Turns
	}
	env.ResumeCount = runsSoFar(t)
	env.Prompt = prompt
	env.ResumePointer = fmt.Sprintf("session.jsonl, continued (resume %d, after %d turns of the last run)", env.ResumeCount, turns)
	lowerLimits(env, lim)
	if tp != "" {
		// The child's spans hang below this call's (OpenTelemetry).
		env.TraceParent = tp
	}
	env.SyncTurns = syncTurns
	if err := td.WriteJSON(taskdir.Envelope, env, true); err != nil {
		unlock()
		return nil, err
	}
	// Keep the earlier run's records beside the new ones.
	for _, f := range []string{taskdir.Result, taskdir.Output} {
		if td.Has(f) {
			_ = td.Rename(f, fmt.Sprintf("%s.%d.json", strings.TrimSuffix(f, ".json"), env.ResumeCount-1))
		}
	}
	lg := &dispatch.Log{TaskID: id, ParentTaskID: own.ParentTaskID, Agent: own.Agent, Depth: env.Depth, MaxDepth: env.MaxDepth,
		Resumes: env.ResumeCount, Queued: time.Now().UTC()}
	if t.Log != nil {
		lg.Complexity, lg.Reasons, lg.Background = t.Log.Complexity, t.Log.Reasons, t.Log.Background
	}
	d.writeLog(td, lg)
	return &job{name: env.TargetAgent, prio: prio, env: env, dir: td.Path(), td: td, lg: lg, unlock: unlock, deny: isolate.NewExpansion()}, nil
}

// runsSoFar is how many runs a task had: counted from the parent's verdict
// where there is one, else from the envelope (an older layout), bounded.
func runsSoFar(t *dispatch.Task) int {
	if t.Verdict != nil {
		return t.Verdict.Run + 1
	}
	if t.Envelope != nil && t.Envelope.ResumeCount >= 0 && t.Envelope.ResumeCount < 1000 {
		return t.Envelope.ResumeCount + 1
	}
	return 1
}

// resumeEnvelope rebuilds a task's envelope for a resume. A child can write
// its own task directory, so nothing is taken from the envelope there: the
// agent, model and fork come from the parent's Owner record; tools,
// permissions, read-only, isolation, network, depth and limits from the
// agent definition and this dispatcher, as for a new dispatch. old (the
// envelope on disk, maybe nil or corrupt) gives only what grants nothing,
// for an Owner record from before v1.
func (d *Dispatcher) resumeEnvelope(own *dispatch.Owner, old *dispatch.Envelope) (*dispatch.Envelope, int, error) {
	var def *registry.Definition
	if own.Fork && own.Agent == "fork" {
		def = forkDef()
	} else {
		var ok bool
		if def, ok = d.cfg.Registry.Get(own.Agent); !ok {
			return nil, 0, fmt.Errorf("cannot resume task %s: agent %q is no longer defined (see brood agents)", own.TaskID, own.Agent)
		}
	}
	env := d.envelope(own.TaskID, def, call.Spec{Agent: def.Name, Prompt: own.Brief, Description: own.Description, Context: own.Context})
	if own.Model != "" {
		env.Model, env.Effort = own.Model, own.Effort
	}
	if d.chooseIsolation(env, def, call.Spec{Isolation: own.Isolation}) {
		d.leaveInPlace() // a resume runs alone; it is not counted
	}
	if old == nil {
		old = &dispatch.Envelope{}
	}
	if own.Fork {
		// A fork's history policy and, for a verbatim fork, system prompt
		// are its parent's, as recorded when it was forked.
		env.Fork, env.HistoryPolicy = true, cmp.Or(own.HistoryPolicy, old.HistoryPolicy)
		if !strings.HasPrefix(env.HistoryPolicy, "fork-") {
			env.HistoryPolicy = policyForkBlock
		}
		if env.HistoryPolicy == policyForkVerbatim {
			env.System = cmp.Or(own.System, old.System)
		}
		d.forkScope(env, def)
	}
	env.ParentTaskID, env.SourceAgent, env.Created, env.Brief = own.ParentTaskID, cmp.Or(own.SourceAgent, env.SourceAgent), own.Created, own.Brief
	if own.Version == 0 {
		env.ParentTaskID, env.SourceAgent, env.Created = old.ParentTaskID, cmp.Or(old.SourceAgent, env.SourceAgent), old.Created
		env.Notes = append(env.Notes, "resumed from an owner record written by an older brood: the model is this process's and the agent definition's, not the one first used")
	}
	d.checkIsolation(env)
	holdBashReadOnly(env)
	return env, priorityOf(def), nil
}

func allowed(list []string, name string) bool {
	for _, a := range list {
		if a == "*" || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// Send delivers a steering message to a running child: it is written to the
// task's inbox (tmp+rename) and reaches the child's model at its next turn
// boundary, without interrupting the turn in progress.
// from says who sends it ("the parent agent", "the user"); the child sees it.
func Send(projectRoot, id, from, message string) error {
	return sendTo(dispatch.Finder{ProjectRoot: projectRoot}, id, from, message)
}

// sendTo is Send to a task f finds.
func sendTo(f dispatch.Finder, id, from, message string) error {
	projectRoot := f.ProjectRoot
	if strings.TrimSpace(message) == "" {
		return errors.New("the message is empty")
	}
	t, err := f.Load(id)
	if err != nil {
		return err
	}
	if t.Status != dispatch.StatusRunning && t.Status != dispatch.StatusQueued {
		return fmt.Errorf("task %s (%s) is not running (status %s); resume it with this message instead (brood tasks resume %s \"...\")", id, t.Agent, t.Status, id)
	}
	td := t.Files()
	if err := td.MkdirAll(taskdir.Inbox); err != nil {
		return err
	}
	from = strings.ReplaceAll(cmp.Or(from, "the parent agent"), "\n", " ")
	name, body := dispatch.NewID()+".txt", []byte("from: "+from+"\n"+message)
	_ = recordSent(projectRoot, id, name, body) // inbox.go: the copy undelivered messages are shown from
	if err := td.WriteFile(filepath.Join(taskdir.Inbox, name), body, true); err != nil {
		return err
	}
	return settle(f, id, name) // inbox.go: it may have ended meanwhile
}

// In is a dispatcher like d whose children work in workspace (a fleet
// worker's copy of the submitter's tree, whose top is root), mounting it
// first when mount is set (the copy is an overlay: Config.Mount): the same
// pool, records, limits and permissions; its task directories stay in d's
// project. With root "" workspace is no copy: its writers work as d's do.
func (d *Dispatcher) In(workspace, root string, mount *isolate.Mount) (*Dispatcher, error) {
	return d.in(workspace, root, mount, false)
}

// ReadOnlyIn is a dispatcher like d whose children read workspace, a copy
// shared with other calls (a fleet worker's verified checkout of a base,
// the lower every overlay of it stacks on): it starts no writer
// (Config.SharedCopy), nor is workspace any writer's copy root.
func (d *Dispatcher) ReadOnlyIn(workspace string) (*Dispatcher, error) {
	return d.in(workspace, "", nil, true)
}

func (d *Dispatcher) in(workspace, root string, mount *isolate.Mount, shared bool) (*Dispatcher, error) {
	d.bg.mu.Lock()
	cfg := d.cfg
	d.bg.mu.Unlock()
	cfg.Workspace, cfg.CopyRoot, cfg.Mount, cfg.SharedCopy = workspace, root, mount, shared
	if mount != nil {
		cfg.CopyRoot = mount.Root
	}
	// The machine's user namespaces are known once per process (a fleet
	// worker makes one of these per call): the new one shares d's answer.
	cfg.ns = d.ns
	// The same process, the same place in the tree: d's depth and cap are
	// already the kernel's answer (New's scan of /proc, or its Factory's),
	// so a fleet worker does not scan /proc once per call.
	cfg.Placed = true
	nd, err := New(cfg)
	if err != nil {
		return nil, err
	}
	// And its children's shared policy parts, with the layers built from
	// them (isolate.PolicyBase: the same hidden paths, settings and
	// environment, as cfg is d's): a worker's calls on one base share a
	// layer instead of building it once a call.
	nd.baseOnce.Do(func() { nd.base = d.policyBase() })
	return nd, nil
}
