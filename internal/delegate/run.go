package delegate

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tool"
)

// GroupsFile is where a child lists the process groups its Bash commands
// started and that are not empty yet: if the child dies first, the parent
// kills them, so nothing a subagent started outlives it.
const GroupsFile = "groups.json"

// run spawns the child through the pool, then verifies and renders. It owns
// the task's lock (taken by prepare) and releases it when the record is
// complete.
func (d *Dispatcher) run(ctx context.Context, j *job) *Outcome {
	defer j.unlock()
	env, dir, lg, name := j.env, j.dir, j.lg, j.name
	id := env.TaskID
	emit := d.emitter(ctx)
	emit(Event{Type: "dispatch_start", TaskID: id, Agent: name, Depth: env.Depth, MaxDepth: env.MaxDepth, Parent: d.cfg.ParentTaskID, Description: j.desc})
	d.announce(id, name, env.Depth, env.MaxDepth)
	if def, ok := d.cfg.Registry.Get(name); ok && len(def.Lacking) > 0 && d.cfg.Stderr != nil {
		fmt.Fprintf(d.cfg.Stderr, "brood: %s runs without %s: its definition names them and brood does not provide them\n", name, strings.Join(def.Lacking, ", "))
	}
	out := &Outcome{TaskID: id}
	// Exactly one stop event per start, whatever happens below.
	defer func() {
		ev := Event{Type: "dispatch_stop", TaskID: id, Agent: name, Depth: env.Depth, Status: dispatch.StatusFailed, Parent: d.cfg.ParentTaskID}
		if out.Result != nil {
			ev.Status = out.Result.Status
			ev.Usage = out.Result.Usage.Add(out.Result.ChildUsage)
		}
		if out.Output != nil {
			ev.WallMS = out.Output.WallMS
			ev.KilledBy = killedBy(out.Output)
		}
		emit(ev)
		u := ev.Usage
		telemetry.MarkChild(ctx, telemetry.Child{TaskID: id, Agent: name, Status: ev.Status, KilledBy: ev.KilledBy, Depth: env.Depth,
			Usage: telemetry.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}})
	}()

	cmd := exec.Command(d.cfg.Exe, append(slices.Clone(d.cfg.Args), "--mode", "json", "--task-id", id, "--envelope", filepath.Join(dir, dispatch.EnvelopeFile))...)
	cmd.Dir = env.Workspace
	// No secret-looking variable reaches a child unless its definition asks for it by name.
	cmd.Env = append(tool.ChildEnviron(childEnv(d.cfg.Env), env.Env), EnvDepth+"="+strconv.Itoa(env.Depth), EnvMaxDepth+"="+strconv.Itoa(env.MaxDepth))
	if f, err := os.Create(filepath.Join(dir, "stderr.log")); err == nil {
		defer f.Close()
		cmd.Stderr = f
	}
	var before *dispatch.TreeState
	var ws *isolate.Workspace
	// A read-only child that this process puts under Landlock itself cannot
	// write, whatever it runs: the kernel is the check, and the before/after
	// comparison of the tree is only needed where the kernel can't hold it.
	// Such a child shares nothing with writers, so it is never held back by
	// one (read-only fan-out runs beside a writer); only a read-only child
	// whose tree must be compared waits for writers.
	kernelHeld := env.ReadOnly && !env.NoLandlock && sandbox.LandlockABI() >= 1
	class := classOf(env)
	if kernelHeld {
		class = pool.Isolated
	}
	if d.cfg.Ask != nil {
		cmd.Env = append(cmd.Env, EnvAskParent+"=1")
	}
	askCtx, endAsks := context.WithCancel(ctx)
	defer endAsks()
	asks := &childAsks{d: d, ctx: askCtx, id: id, agent: name, input: make(chan []byte, maxPendingAsks)}
	prog := &progress{d: d, emit: emit, id: id, agent: name, depth: env.Depth, asks: asks}
	started := time.Now()
	o, err := d.cfg.Pool.Run(ctx, pool.Job{
		ID:       id,
		Cmd:      cmd,
		Priority: j.prio,
		Class:    class,
		Timeout:  time.Duration(env.TimeoutMS) * time.Millisecond,
		BeforeStart: func() error {
			if class == pool.Mutating || (class == pool.ReadOnly && !kernelHeld) {
				before, _ = dispatch.SnapshotTree(ctx, env.Workspace)
			}
			return d.configure(ctx, cmd, env, dir, &ws)
		},
		OnThread: func() error { return sandboxFromParent(cmd, env, dir, ws) },
		OnStart: func(pid int) {
			lg.PID, lg.Started = pid, time.Now().UTC()
			d.writeLog(dir, lg)
		},
		OnLine:     prog.line,
		Input:      asks.input,
		OutputPath: filepath.Join(dir, dispatch.OutputFile),
		Marker:     depth.Marker{Task: id, Depth: env.Depth, Max: env.MaxDepth},
	})
	endAsks() // a question still open is void: its asker is gone
	lg.Finished = time.Now().UTC()
	d.writeLog(dir, lg)
	if ws != nil {
		defer ws.Cleanup(context.WithoutCancel(ctx))
	}
	if o == nil {
		status := dispatch.StatusFailed
		if ctx.Err() != nil {
			status = dispatch.StatusCancelled
		}
		res := d.recover(id, name, dir, status, "never started: "+errText(err))
		out.Result = res
		out.Text = dispatch.View{Result: res, ResultPath: filepath.Join(dir, dispatch.ResultFile)}.Render()
		return out
	}
	// (An error with an outcome is only a failed output.json write: the
	// child ran, and its result is judged as usual.)
	killLeftovers(dir, o.PID)
	out.Output = o
	want := dispatch.Expect{TaskID: id, Agent: name, ReadOnly: env.ReadOnly}
	if before != nil {
		if after, err := dispatch.SnapshotTree(context.WithoutCancel(ctx), env.Workspace); err == nil {
			want.Changed, want.Observed = dispatch.Changed(before, after), true
		}
	}
	resultPath := filepath.Join(dir, dispatch.ResultFile)
	res, fails := dispatch.Verify(resultPath, want)
	if res == nil || !dispatch.Exists(resultPath) {
		status := dispatch.StatusFailed
		why := fmt.Sprintf("the child exited with status %d and wrote no result", o.ExitCode)
		if o.KilledBy != pool.KilledByNone {
			status = dispatch.StatusKilled
			why = "killed by the " + o.KilledBy + killedWhy(o.KilledBy, d.cfg.Settings, env)
		}
		if o.Signal != "" && o.KilledBy == pool.KilledByNone {
			// Killed from outside (brood tasks kill, the OOM killer, a user)
			// before it could write its result.
			status = dispatch.StatusKilled
			why = "the child was killed by signal " + o.Signal + " before it wrote a result"
		}
		res = d.recover(id, name, dir, status, why)
		fails = nil
	}
	if res.Status == dispatch.StatusCancelled && (o.KilledBy == pool.KilledByTimeout || o.KilledBy == pool.KilledByLifeguard) {
		// The child wound down on our SIGTERM and called it a cancel; the
		// record says who really stopped it.
		res.Status = dispatch.StatusKilled
		res.Error = "killed by the " + o.KilledBy + killedWhy(o.KilledBy, d.cfg.Settings, env)
		res.ResumeHandle = id
		_ = dispatch.WriteJSON(resultPath, res)
	}
	isoMsg, patchState, hunks := "", "", ""
	if ws != nil {
		switch res.Status {
		case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
			var io *isolate.Outcome
			isoMsg, io = d.bringBack(ctx, ws, dir)
			patchState, hunks = patchView(io)
		default:
			patchState = "not-applied"
			// Half-done work of a child that failed or was stopped does not
			// land in the user's tree on its own; it is kept, and a resume
			// starts from a fresh copy.
			ws.Keep()
			isoMsg = fmt.Sprintf("%s copy: its changes were NOT applied because the child ended %s; the copy is kept under %s", ws.Mode, res.Status, filepath.Join(dir, "isolate"))
		}
		res.Isolation = isoMsg
		_ = dispatch.WriteJSON(resultPath, res)
	}
	out.Result = res
	out.Failures = fails
	out.Concerns = d.concerns(name, dir, env, res, want)
	d.mu.Lock()
	d.childUsage = d.childUsage.Add(res.Usage).Add(res.ChildUsage)
	d.mu.Unlock()
	out.Text = dispatch.View{
		SummaryPath: d.longSummary(id, res),
		Result:      res, Duration: time.Since(started), InlineLimit: d.cfg.Settings.Results.InlineLimit,
		ResultPath: resultPath, Transcript: filepath.Join(dir, dispatch.SessionFile), Verification: fails,
		IsolationMsg: isoMsg, Notes: env.Notes, Concerns: out.Concerns,
		Patch: patchState, PatchHunks: hunks,
	}.Render()
	return out
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
func (d *Dispatcher) bringBack(ctx context.Context, ws *isolate.Workspace, dir string) (string, *isolate.Outcome) {
	ctx = context.WithoutCancel(ctx)
	unlock, err := d.cfg.Pool.LockTree(ctx)
	if err == nil {
		defer unlock()
	}
	o, err := ws.Finish(ctx)
	if err != nil {
		ws.Keep()
		return fmt.Sprintf("%s copy: bringing the changes back failed (%v); the child's copy is kept under %s", ws.Mode, err, filepath.Join(dir, "isolate")), &isolate.Outcome{Conflict: err.Error()}
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
func killLeftovers(dir string, session int) {
	var groups []int
	if dispatch.ReadJSON(filepath.Join(dir, GroupsFile), &groups) != nil {
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

// configure prepares an isolated child's copy and namespaces on its command,
// once it holds its pool slot (so the copy is taken when the child starts).
func (d *Dispatcher) configure(ctx context.Context, cmd *exec.Cmd, env *dispatch.Envelope, dir string, ws **isolate.Workspace) error {
	changed := false
	if env.Network != nil && !*env.Network {
		changed = true
		if err := sandbox.ConfigureNetwork(cmd, d.sandboxReport(ctx)); err != nil {
			env.Notes = append(env.Notes, "network: false could not be enforced by a namespace: "+err.Error())
		}
	}
	if env.Isolation == "worktree" {
		changed = true
		id := env.TaskID
		if env.ResumeCount > 0 {
			// A resume gets a fresh copy; an earlier one left behind (a
			// conflict, a killed run) is kept beside it, never reused blind.
			id = fmt.Sprintf("%s-%d", env.TaskID, env.ResumeCount)
			prev := filepath.Join(dir, "isolate")
			if dispatch.Exists(prev) {
				kept := fmt.Sprintf("%s.%d", prev, env.ResumeCount-1)
				if err := os.Rename(prev, kept); err != nil {
					return fmt.Errorf("keep the earlier copy: %w", err)
				}
				env.Notes = append(env.Notes, "the earlier run's copy is kept at "+kept)
			}
		}
		opts := isolate.Options{Dir: env.Workspace, ID: id, StateDir: dir, ForceWorktree: env.ForceWorktree}
		if len(env.AllowedDestinations) > 0 {
			// Its own subagents' records go to the real tree, not its copy.
			opts.Keep = []string{dispatch.Root(env.ProjectRoot)}
		}
		w, err := d.isolator(ctx).Prepare(ctx, opts)
		if err != nil {
			return fmt.Errorf("isolate the child: %w", err)
		}
		*ws = w
		if w.Mode == isolate.ModeNone {
			env.Isolation = ""
			env.Notes = append(env.Notes, w.Note)
		} else {
			env.IsolationRoot, env.IsolationDir = w.Root, w.Dir
			if w.Dir != env.Workspace {
				// A worktree lives elsewhere: the child must be told where.
				env.System = strings.Replace(env.System, "WORKSPACE PATH:\n"+env.Workspace+"\n", "WORKSPACE PATH:\n"+w.Dir+"\n", 1)
			}
		}
		if err := w.Configure(cmd); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	return dispatch.WriteJSON(filepath.Join(dir, dispatch.EnvelopeFile), env)
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

// recover writes the result of a child that died without one: the last
// thing it said, as a partial summary, and the handle to resume it.
func (d *Dispatcher) recover(id, agent, dir, status, why string) *dispatch.Result {
	res := &dispatch.Result{
		TaskID: id, Agent: agent, Status: status, Error: why, ResumeHandle: id,
		WrittenBy: "parent", Finished: time.Now().UTC(), FilesChanged: []string{},
	}
	if recs, _, err := session.ReadFile(filepath.Join(dir, dispatch.SessionFile)); err == nil {
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
	_ = dispatch.WriteJSON(filepath.Join(dir, dispatch.ResultFile), res)
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
	if res == nil || len(res.Summary) <= limit || d.cfg.OwnerDir == "" {
		return ""
	}
	path, err := dispatch.WriteSummary(d.cfg.OwnerDir, id, res.Summary)
	if err != nil {
		return ""
	}
	return path
}
