package spawn

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/taskdir"
)

// GroupsFile is where a child lists the process groups its Bash commands
// started and that are not empty yet: if the child dies first, the parent
// kills them, so nothing a subagent started outlives it.
const GroupsFile = taskdir.Groups

// removeTmp removes the child's tmp/ (its TMPDIR) from its task directory;
// a failure is said on stderr, the run's outcome stands.
func (d *Dispatcher) removeTmp(td *taskdir.Dir) {
	if err := td.RemoveEntry(taskdir.Tmp); err != nil && d.cfg.Stderr != nil {
		fmt.Fprintf(d.cfg.Stderr, "brood: remove the child's TMPDIR %s: %v\n", td.File(taskdir.Tmp), err)
	}
}

// spawn is one start of a job's child process.
type spawn struct {
	d      *Dispatcher
	j      *job
	ws     *isolate.Workspace
	before *dispatch.TreeState
	// pwin records this run's own hooks' writes while the child runs
	// (parentwrites.go); closed by the walk after it.
	pwin   *writeWindow
	prog   *progress
	emit   func(Event)
	alive  func()                          // the call's watcher's (call.Watch.Alive), or nil
	turn   func(context.Context, int) bool // call.Watch.Turn, or nil
	final  func(context.Context, int) bool // call.Watch.Final, or nil
	askCtx context.Context
	cfg    *configGuard // the configuration an in-place writer may not change
	// links are an in-place writer's tree's symbolic links before it
	// started (isolate.TreeLinks), for its link guard (linkguard.go).
	links []isolate.Links
}

// start builds the command and runs it through the pool.
func (s *spawn) start(ctx context.Context) (*dispatch.Output, error) {
	d, j := s.d, s.j
	env, td, id := j.env, j.td, j.env.TaskID
	cmd := d.childCommand(env, id, td.File(taskdir.Envelope))
	// The child's stderr reaches the pool through a pipe and stderr.log is
	// made, fresh, on its first byte: a child that says nothing there (most
	// do) costs the parent no inode. Whatever an earlier run left at
	// stderr.log (a link to a file of the user's) is removed, never opened.
	if err := td.RemoveEntry(taskdir.Stderr); err != nil {
		return nil, fmt.Errorf("prepare the child's stderr.log: %w", err)
	}
	stderr := td.Lazy(taskdir.Stderr)
	defer stderr.Close()
	cmd.Stderr = stderr
	// The same for tmp/: the child may have left a link there (to the work
	// tree, say), and a TMPDIR pointing at it would hand the link's target
	// to the child. It is removed before every start, and the child makes
	// it anew, a real empty directory, inside its task directory (no
	// sandbox rule names tmp/: the task directory's covers it).
	if err := td.RemoveEntry(taskdir.Tmp); err != nil {
		return nil, fmt.Errorf("prepare the child's tmp/: %w", err)
	}
	class := classOf(env)
	// A read-only child that this process puts under Landlock itself cannot
	// write, whatever it runs: the kernel is the check, and the before/after
	// comparison of the tree is only needed where the kernel can't hold it.
	// Such a child shares nothing with writers, so it is never held back by
	// one (read-only fan-out runs beside a writer); only a read-only child
	// whose tree must be compared waits for writers.
	kernelHeld := env.ReadOnly && !env.NoLandlock && sandbox.LandlockABI() >= 1
	if kernelHeld {
		class = pool.Isolated
	}
	if d.copyWriter(env) {
		class = pool.Mutating // the in-place turn on its parent's copy
	}
	d.claim(id, id)
	// One stdin for both kinds of reply; the pool writes it in order.
	input := make(chan []byte, maxPendingAsks+maxPendingHooks+1)
	asks := &childAsks{d: d, ctx: s.askCtx, id: id, agent: j.name, input: input}
	t := &tree{}
	hooks := &childHooks{d: d, ctx: s.askCtx, id: id, agent: j.name, depth: env.Depth, mode: env.Permissions.Mode, tree: t, input: input}
	turns := &childTurns{ctx: ctx, f: s.turn, final: s.final, input: input}
	s.prog = &progress{d: d, emit: s.emit, id: id, agent: j.name, depth: env.Depth, delegates: env.MayDelegate(), asks: asks, hooks: hooks, turns: turns, tree: t, calls: &callLog{run: env.ResumeCount}}
	j.warm = d.warmFor(j.warm, cmd)
	spawntrace.Mark(ctx, "setup")
	confiner := &spawnConfiner{s: s, snapshot: class == pool.Mutating || (class == pool.ReadOnly && !kernelHeld)}
	h, err := d.cfg.Pool.Start(ctx, pool.Job{
		ID:       id,
		Cmd:      cmd,
		Priority: j.prio,
		Class:    class,
		Timeout:  time.Duration(env.TimeoutMS) * time.Millisecond,
		Limits:   env.Limits,
		Confine:  confiner,
		Warm:     j.warm.child(),
		Marker:   depth.Marker{Task: id, Depth: env.Depth, Max: env.MaxDepth},
	})
	if err != nil {
		return nil, err
	}
	confiner.startedInNS()
	s.cfg.started(h.PID())
	j.lg.PID, j.lg.PIDNS, j.lg.Started = h.PID(), dispatch.OwnPIDNS(), time.Now().UTC()
	d.writeLog(td, j.lg)
	go sendDownAll(h, input)
	for l := range h.Lines() {
		if s.alive != nil {
			s.alive()
		}
		if !l.Ping {
			s.prog.line(ctx, l.Text)
		}
	}
	o := h.Wait()
	// A final answer's boundary may still be being made durable (the
	// child did not wait for it): the call's result comes after it.
	turns.wait()
	if o.KilledBy == pool.KilledByNone && dispatch.ReadKill(d.cfg.ProjectRoot, id, j.lg.Started) != nil {
		// A person's `brood tasks kill` stopped it from outside the pool.
		o.KilledBy = dispatch.KilledByUser
	}
	if err := dispatch.WriteJSONQuick(td.File(taskdir.Output), o); err != nil {
		return o, fmt.Errorf("write output.json: %w", err)
	}
	return o, nil
}

// sendDownAll writes the replies queued for a child (answers to its
// permission questions and hook calls) to its stdin, in order, until it has
// ended.
func sendDownAll(h *pool.Process, input <-chan []byte) {
	for {
		select {
		case b := <-input:
			if h.Send(b) != nil {
				return
			}
		case <-h.Done():
			return
		}
	}
}

// overlayMountFailed reports whether the child could not mount its overlay
// copy: it exited with isolate.ExitMountFailed before it said a word, so it
// ran nothing (the probe's answer, perhaps cached, was wrong for this tree
// or no longer true).
func (s *spawn) overlayMountFailed(o *dispatch.Output) bool {
	return o != nil && s.ws != nil && s.ws.Mode == isolate.ModeOverlay && o.ExitCode == isolate.ExitMountFailed &&
		o.Signal == "" && s.prog != nil && !s.prog.saidAnything()
}

// retryOnWorktree starts the child again on a git worktree copy after its
// overlay could not be mounted; this process gives no more overlays (and
// the probe cache says so).
func (s *spawn) retryOnWorktree(ctx context.Context, o *dispatch.Output) (*dispatch.Output, error) {
	why := strings.TrimSpace(o.StderrTail)
	if i := strings.LastIndexByte(why, '\n'); i >= 0 {
		why = why[i+1:]
	}
	s.d.isolator(ctx).OverlayFailed(why)
	s.ws.Cleanup(context.WithoutCancel(ctx))
	s.closeWindow()
	s.ws, s.before, s.prog, s.links = nil, nil, nil, nil
	env := s.j.env
	env.IsolationRoot, env.IsolationDir = "", ""
	env.Notes = append(env.Notes, "the overlay copy could not be mounted ("+why+"): the child ran on a git worktree copy instead")
	return s.start(ctx)
}

// judge decides how a run ended: the result the parent model sees and the
// verdict recorded. The child's result.json is read, never rewritten.
func (d *Dispatcher) judge(ctx context.Context, j *job, s *spawn, o *dispatch.Output) (*dispatch.Result, dispatch.Verdict, dispatch.Expect) {
	env, id := j.env, j.env.TaskID
	want := dispatch.Expect{TaskID: id, Agent: j.name, ReadOnly: env.ReadOnly}
	s.cfg.clearIndexBits(context.WithoutCancel(ctx)) // before the after-walk, which the bits would blind
	s.cfg.settleStore(context.WithoutCancel(ctx))
	s.cfg.prefetchNested() // the configuration guard's walk, beside this one
	var also, unsure []string
	if s.before != nil {
		after, err := dispatch.SnapshotTree(context.WithoutCancel(ctx), env.Workspace)
		if err == nil {
			dispatch.SnapshotNested(context.WithoutCancel(ctx), after, s.before.NestedDirs())
			changed, cerr := dispatch.ChangedSince(context.WithoutCancel(ctx), s.before, after)
			if cerr != nil {
				unsure = append(unsure, cerr.Error())
			}
			touched := s.d.parentW.touched(s.pwin)
			changed, also = attribute(changed, touched, after.Root, env.Workspace, j.td.File(taskdir.Session))
			if env.ReadOnly {
				changed = s.ignoredAside(context.WithoutCancel(ctx), s.before, after, changed)
			}
			want.Changed, want.Observed, want.Root = s.cfg.withUserBitsChanged(changed), true, after.Root
			want.Refs = s.itsRefs(dispatch.RefChanges(context.WithoutCancel(ctx), s.before, after))
			if why := dispatch.IgnoredBound(s.before, after); why != "" {
				j.env.Notes = append(j.env.Notes, why)
			}
			if m := dispatch.ModeChanges(s.before, after); len(m) > 0 {
				// (git status shows none of these: review confine21a P2)
				j.env.Notes = append(j.env.Notes, "modes changed in the tree (others may now write it, or it runs as its owner): "+strings.Join(m, ", "))
			}
			if n := len(s.before.NestedLeftOut); n > 0 {
				j.env.Notes = append(j.env.Notes, fmt.Sprintf("the files of %d nested repositories were not checked (more than brood looks into): %s", n, strings.Join(s.before.NestedLeftOut, ", ")))
			}
		}
		s.closeWindow()
	}
	if len(also) > 0 {
		j.env.Notes = append(j.env.Notes, "also changed during its run by this run's own hooks (it may have changed them too): "+strings.Join(also, ", "))
	}
	if s.before != nil {
		if locks := leftGitLocks(env.Workspace, j.lg.Started); len(locks) > 0 {
			j.env.Notes = append(j.env.Notes, "left git lock files, which make the next git commit fail: "+strings.Join(locks, ", ")+" (remove them once no git of yours runs)")
		}
	}
	// Read once: the verdict's hash is of the bytes judged.
	res, fails, hash, readErr := dispatch.VerifyDirHash(j.td, want)
	fails = append(fails, unsure...) // what the parent could not compare: never done
	if readErr == nil && want.Observed && res.FilesChanged == nil {
		// The child left its account to these walks (childrun's
		// parentWalks): what changed is what they saw.
		res.FilesChanged = nonNil(want.Changed)
	}
	kill := dispatch.ReadKill(d.cfg.ProjectRoot, id, j.lg.Started)
	switch {
	case readErr != nil && errors.Is(readErr, fs.ErrNotExist):
		status, why := d.noResult(o, env, s.prog.lastError())
		switch {
		case kill != nil:
			status, why = dispatch.StatusKilled, killedByUser(kill)
		case o.KilledBy == pool.KilledByCancel && ctx.Err() != nil:
			why = dispatch.StopCause(ctx, d.cfg.ParentTaskID != "") + ", before it wrote a result"
		}
		res = d.recover(j, status, why, true)
		return res, verdictOf(j, res, nil, dispatch.HashRecord(j.td, taskdir.Result)), want
	case readErr != nil:
		// Not JSON, not a file: failed, naming the file and the error. The
		// child's file stays as it is, for whoever looks into it.
		res = d.recover(j, dispatch.StatusFailed, "the child's "+readErr.Error(), false)
		return res, verdictOf(j, res, []string{readErr.Error()}, hash), want
	}
	switch {
	case kill != nil:
		// A person stopped it: that, not "context canceled", is what
		// happened.
		res.Status, res.Error, res.ResumeHandle = dispatch.StatusKilled, killedByUser(kill), id
	case res.Status == dispatch.StatusCancelled && (o.KilledBy == pool.KilledByTimeout || o.KilledBy == pool.KilledByLifeguard):
		// The child wound down on our SIGTERM and called it a cancel; the
		// verdict says who really stopped it.
		res.Status = dispatch.StatusKilled
		res.Error = "killed by the " + o.KilledBy + killedWhy(o.KilledBy, d.cfg.Settings, env)
		res.ResumeHandle = id
	case pool.LimitKill(o.KilledBy):
		// It hit one of its limits: it ended by it, whatever it wrote.
		res.Status, res.Error, res.ResumeHandle = dispatch.StatusKilled, "killed by the "+o.KilledBy, id
	case res.Status == dispatch.StatusCancelled && ctx.Err() != nil:
		// It wound down because this parent was stopped: why that was
		// (Ctrl-C, a deadline), not Go's "context canceled".
		res.Error, res.ResumeHandle = dispatch.StopCause(ctx, d.cfg.ParentTaskID != ""), id
	case res.Status == dispatch.StatusDone && o.ExitCode != 0:
		fails = append(fails, fmt.Sprintf("the child claimed done but exited with status %d", o.ExitCode))
	}
	if len(fails) > 0 {
		// Rejected: whatever the child claimed, this run did not end in a
		// result its parent trusts, now or when read again later.
		res.Status, res.ResumeHandle = dispatch.StatusFailed, id
		res.Error = "its parent rejected the result: " + strings.Join(fails, "; ")
	}
	return res, verdictOf(j, res, fails, hash), want
}

// noResult says how a child that wrote no result ended, from the parent's
// own process outcome (and the child's last protocol error, as data).
func (d *Dispatcher) noResult(o *dispatch.Output, env *dispatch.Envelope, childErr string) (string, string) {
	if o.KilledBy == pool.KilledByCancel {
		// This parent stopped it (it was cancelled itself) before the child
		// could record that: cancelled, as a child that wound down in time
		// records itself, and resumable the same way.
		return dispatch.StatusCancelled, "stopped by its parent, which was cancelled, before it wrote a result"
	}
	if o.KilledBy != pool.KilledByNone {
		return dispatch.StatusKilled, "killed by the " + o.KilledBy + killedWhy(o.KilledBy, d.cfg.Settings, env)
	}
	if o.Signal != "" {
		// Killed from outside (the OOM killer, a person's kill) before it
		// could write its result.
		return dispatch.StatusKilled, "the child was killed by signal " + o.Signal + " before it wrote a result"
	}
	why := fmt.Sprintf("the child exited with status %d and wrote no result", o.ExitCode)
	if e := cmp.Or(childErr, enospc(o.StderrTail)); e != "" {
		why += ": " + oneLineOf(e)
	}
	return dispatch.StatusFailed, why
}

// enospc picks "no space left on device" out of the child's last words.
func enospc(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, syscall.ENOSPC.Error()) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func oneLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func killedByUser(k *dispatch.Kill) string {
	return fmt.Sprintf("stopped by the user (%s) at %s", k.Via, k.At.Format(time.RFC3339))
}

// verdictOf is the parent's verdict on one run.
func verdictOf(j *job, res *dispatch.Result, fails []string, hash string) dispatch.Verdict {
	v := dispatch.Verdict{
		TaskID: j.env.TaskID, Run: j.env.ResumeCount, Status: res.Status, Accepted: len(fails) == 0 && res.WrittenBy == "child",
		Reasons: fails, ResultSHA256: hash, Usage: res.Usage.Add(res.ChildUsage), Decided: time.Now().UTC(),
	}
	if res.WrittenBy != "child" || res.Status == dispatch.StatusKilled || res.Status == dispatch.StatusCancelled || len(fails) > 0 {
		v.Error = res.Error
	}
	if i := slices.IndexFunc(j.env.Notes, isolate.IsParentNote); i >= 0 {
		v.ReadDeny = j.env.Notes[i]
	}
	if res.Status == dispatch.StatusKilled && strings.HasPrefix(res.Error, "stopped by the user") {
		v.KilledBy = dispatch.KilledByUser
	}
	return v
}

// record writes the verdict (the parent's own record, out of the child's
// reach) and renders what the parent model sees. A verdict that cannot be
// written is said in the outcome, never passed over.
func (d *Dispatcher) record(j *job, res *dispatch.Result, o *dispatch.Output, v dispatch.Verdict, isoMsg string, concerns []string, patch, hunks string) string {
	notes := slices.Clone(j.env.Notes)
	// Nothing says the task ran before its owner record is on disk.
	err := j.owner.Wait()
	if err == nil {
		err = d.cfg.Owners.WriteVerdict(j.env.TaskID, v)
	}
	if err != nil {
		// The run is then never reported as done.
		notes = append(notes, "the parent could not record its verdict: "+err.Error())
		if res.Status == dispatch.StatusDone {
			res.Status = dispatch.StatusFailed
			res.Error = cmp.Or(res.Error, "the parent could not record the result: "+err.Error())
		}
	}
	dur := time.Duration(0)
	if o != nil {
		dur = time.Duration(o.WallMS) * time.Millisecond
	}
	return dispatch.View{
		SummaryPath: d.longSummary(j.env.TaskID, res),
		Result:      res, Duration: dur, InlineLimit: d.cfg.Settings.Results.InlineLimit,
		ResultPath: j.td.File(taskdir.Result), Transcript: j.td.File(taskdir.Session), Verification: v.Reasons,
		IsolationMsg: isoMsg, Notes: notes, Concerns: concerns,
		Patch: patch, PatchHunks: hunks, Refs: v.Refs,
	}.Render()
}

// land brings an isolated child's changes back, or keeps its copy: what
// the status line says of it, and what became of its patch (patchView).
func (d *Dispatcher) land(ctx context.Context, ws *isolate.Workspace, td *taskdir.Dir, res *dispatch.Result) (msg, patch, hunks string) {
	switch res.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
		msg, io := d.bringBack(ctx, ws, td)
		patch, hunks = patchView(io)
		if patch == call.PatchPartlyApplied {
			// Part of it is in the tree: never done, nor not-applied.
			res.Status = dispatch.StatusFailed
			res.Error = partlyApplied(io)
		}
		if io != nil && ws.Mode != isolate.ModeNone && (io.Applied || len(io.Files) > 0) {
			// The patch is the truth of what the child changed: the
			// child's own account of its view (an overlay follows the
			// parent's tree) could hold the parent's edits.
			res.FilesChanged = nonNil(io.Files)
		}
		return msg, patch, hunks
	}
	// Half-done work of a child that failed or was stopped does not land
	// in the user's tree on its own; it is kept, and a resume starts from a
	// fresh copy.
	ws.Keep()
	return fmt.Sprintf("%s copy: its changes were NOT applied because the child ended %s; the copy is kept under %s", ws.Mode, res.Status, td.File(taskdir.Isolate)), call.PatchNotApplied, ""
}

// partlyApplied is the error of a run whose landing failed partway and
// could not put back all it wrote.
func partlyApplied(o *isolate.Outcome) string {
	kept := "their earlier versions could not be kept"
	if o.Preimages != "" {
		kept = "their earlier versions are in " + o.Preimages
	}
	return fmt.Sprintf("its change landed only in part: the landing failed partway and could NOT put back %s (%s; the patch is at %s)",
		strings.Join(o.Partial, "; "), kept, o.Patch)
}

// killedBy names who stopped a child: the pool's lifeguard, timeout or
// cancel, or "signal" for a kill from outside (brood tasks kill, a person).
func killedBy(o *dispatch.Output) string {
	switch {
	case o.KilledBy != "" && o.KilledBy != pool.KilledByNone:
		return o.KilledBy
	case o.Signal != "":
		return "signal"
	}
	return ""
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// bringBack applies an isolated child's changes to the tree, holding the
// tree so that no tree-sharing child sees them as its own. If that fails the
// child's copy is kept, never destroyed.
func (d *Dispatcher) bringBack(ctx context.Context, ws *isolate.Workspace, td *taskdir.Dir) (string, *isolate.Outcome) {
	ctx = context.WithoutCancel(ctx)
	unlock, err := d.cfg.Pool.LockTree(ctx)
	if err == nil {
		defer unlock()
	}
	o, err := ws.Finish(ctx)
	if err != nil {
		ws.Keep()
		return fmt.Sprintf("%s copy: bringing the changes back failed (%v); the child's copy is kept under %s", ws.Mode, err, td.File(taskdir.Isolate)), &isolate.Outcome{Conflict: err.Error()}
	}
	return describeIsolation(ws.Mode, o), o
}

// maxInlineHunks bounds the part of a refused patch shown to the model.
const maxInlineHunks = 4000

// patchView is what the status line says of an isolated child's patch
// ("applied", "not-applied", or "" when there was none) and, for one that
// was refused, its first hunks to show inline.
func patchView(o *isolate.Outcome) (state, hunks string) {
	switch {
	case o == nil || (len(o.Files) == 0 && o.Conflict == ""):
		return "", ""
	case o.Applied:
		return "applied", ""
	case len(o.Partial) > 0:
		return call.PatchPartlyApplied, ""
	}
	if o.Patch == "" {
		return "not-applied", ""
	}
	f, err := os.Open(o.Patch)
	if err != nil {
		return "not-applied", ""
	}
	defer f.Close()
	buf := make([]byte, maxInlineHunks+1)
	n, _ := io.ReadFull(f, buf)
	hunks = string(buf[:min(n, maxInlineHunks)])
	if n > maxInlineHunks {
		hunks += fmt.Sprintf("\n[brood: the patch goes on; the whole is in %s]", o.Patch)
	}
	return "not-applied", hunks
}

// killLeftovers kills the process groups a child's Bash commands left
// behind (the child records them; if it was killed it could not clean up).
// The list is the child's to write, so a group is killed only if it is
// still in the child's own session: a child cannot make the parent signal
// anything it could not reach itself.
func killLeftovers(td *taskdir.Dir, session int) {
	var groups []int
	if td.ReadJSON(GroupsFile, &groups) != nil {
		return
	}
	if len(groups) == 0 {
		return
	}
	live := groupsInSession(session)
	for _, g := range groups {
		if g > 1 && g != session && live[g] {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
	}
}

// groupsInSession lists the process groups that have a member in session
// (a group's leader may be gone while the group lives on).
func groupsInSession(session int) map[int]bool {
	out := map[int]bool{}
	for _, p := range dispatch.Procs() {
		if p.Session == session {
			out[p.PGRP] = true
		}
	}
	return out
}

func killedWhy(by string, s settings.Settings, env *dispatch.Envelope) string {
	switch by {
	case pool.KilledByLifeguard:
		return fmt.Sprintf(" (no heartbeat for %s)", s.Pool.HeartbeatTimeout.Duration)
	case pool.KilledByTimeout:
		return fmt.Sprintf(" (hard timeout of %s)", time.Duration(env.TimeoutMS)*time.Millisecond)
	case pool.KilledByCancel:
		return " (the parent was cancelled)"
	}
	return ""
}

// recover builds the result of a child that left none usable: the last
// thing it said, as a partial summary, and the handle to resume it. write
// says whether it goes to result.json (only where the child wrote none:
// the child's own file, even a corrupt one, is never overwritten).
func (d *Dispatcher) recover(j *job, status, why string, write bool) *dispatch.Result {
	id := j.env.TaskID
	res := &dispatch.Result{
		TaskID: id, Agent: j.name, Status: status, Error: why, ResumeHandle: id,
		WrittenBy: "parent", Finished: time.Now().UTC(), FilesChanged: []string{},
	}
	if b, err := j.td.ReadFile(taskdir.Session, 0); err == nil {
		recs, _, _ := session.Read(bytes.NewReader(b))
		st := session.Replay(recs)
		res.Usage, res.Turns = st.Usage, st.Turns
		for i := len(st.Messages) - 1; i >= 0; i-- {
			if m := st.Messages[i]; m.Role == model.RoleAssistant && strings.TrimSpace(m.Text()) != "" {
				res.Summary = "[partial: the last thing the subagent said before it stopped]\n" + m.Text()
				break
			}
		}
	}
	if res.Summary == "" {
		res.Summary = "[the subagent stopped before it said anything]"
	}
	if write {
		_ = j.td.WriteJSON(taskdir.Result, res, true)
	}
	return res
}

// longSummary writes the whole summary of a result over the inline limit as
// a text file in this process's own records (out of every child's reach),
// so the parent model can Read it in pieces; "" when it fits or cannot be
// written (the cut note then names result.json).
func (d *Dispatcher) longSummary(id string, res *dispatch.Result) string {
	limit := d.cfg.Settings.Results.InlineLimit
	if limit <= 0 {
		limit = 20000
	}
	if res == nil || len(res.Summary) <= limit {
		return ""
	}
	path, err := dispatch.WriteSummary(d.cfg.Owners.Path(), id, res.Summary)
	if err != nil {
		return ""
	}
	return path
}
