// Package pool runs subagent child processes: a bounded number at a time, by
// priority, each in its own process group, watched by a lifeguard that kills
// a child silent for too long, under a hard wall-clock limit, and taken down
// in stages (SIGTERM, a wait, SIGKILL) when the parent is cancelled. It
// knows nothing of models or agents: a job is a prepared command, and Start hands back a Process
// whose lines the caller reads, whose stdin it writes and whose Output it
// gets from Wait (what it records of that is the caller's).
package pool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/spawntrace"
)

// Config sets the pool's limits. Zero values take the defaults in brackets.
type Config struct {
	Concurrency      int           // live children at once [5]
	HeartbeatTimeout time.Duration // silence before the lifeguard kills [60s]
	KillGrace        time.Duration // SIGTERM to SIGKILL [3s]
	// Containment is how a child's whole tree is held: "auto" or "" (a
	// cgroup where cgroup v2 is writable, else a PID namespace), "cgroup",
	// or "pidns" (the fallback, forced).
	Containment string
	// Limits hold a job that sets none of its own, and every warm child
	// (what one child may consume; zero: none).
	Limits limits.Set
}

// Pool runs jobs. It is safe for concurrent use; one pool serves one parent
// process.
type Pool struct {
	cfg   Config
	sched *scheduler
	seq   atomic.Int64

	containOnce sync.Once
	contain     containment
	limits      limitWatch // one ticker reads every running child's limit counters
}

// New returns a pool.
func New(cfg Config) *Pool {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 5
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = 60 * time.Second
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 3 * time.Second
	}
	return &Pool{cfg: cfg, sched: newScheduler(cfg.Concurrency)}
}

// LockTree waits until no tree-sharing child runs, then keeps them from
// starting until the returned func is called. Applying an isolated child's
// patch holds it, so the change is never mistaken for a running child's.
func (p *Pool) LockTree(ctx context.Context) (func(), error) { return p.sched.acquireTree(ctx) }

// containment probes (once) how this pool holds its children.
func (p *Pool) containment(ctx context.Context) containment {
	p.containOnce.Do(func() { p.contain = probeContainment(context.WithoutCancel(ctx), p.cfg.Containment) })
	return p.contain
}

// Warm starts the containment probe in the background (once per pool), so
// that the first job does not wait for it: a dispatcher calls it while it
// prepares a task. Run waits for the probe as it always has.
func (p *Pool) Warm() {
	go p.containment(context.Background())
}

// Containment says how this pool holds its children's process trees (see
// ContainCgroup, ContainPIDNS, ContainNone) and, for a fallback, why.
func (p *Pool) Containment(ctx context.Context) (mode, note string) {
	c := p.containment(ctx)
	return c.mode, c.note
}

// Stats reports how many jobs run and wait.
func (p *Pool) Stats() (running, waiting int) { return p.sched.stats() }

// Job is one child process to run.
type Job struct {
	ID       string
	Cmd      *exec.Cmd // path, args, env and dir set; the pool owns the rest
	Priority int       // lower runs first
	Class    Class
	Timeout  time.Duration // hard wall-clock limit; 0 = none
	// Confine confines the child (Confiner): required, Run refuses a job
	// without one.
	Confine Confiner
	// Marker, when set, becomes the child's argv[0] and its cgroup's name:
	// how its depth is known below it without the environment.
	Marker depth.Marker
	// Limits are what the child and everything it starts may consume
	// (zero: Config.Limits); a child that hits one is killed and its
	// Output.KilledBy names the limit ("memory limit of 4 GiB").
	Limits limits.Set
	// Warm, when set, is a process started ahead of the job for it
	// (Prestart, with this job's command line, marker and sandbox): if it
	// is still alive when the job holds its slot, it takes the job and Cmd
	// and Confine's Confine are not used; otherwise the job starts cold
	// from Cmd.
	Warm *WarmChild
}

// Killers name who ended a process.
const (
	KilledByNone      = "none"
	KilledByLifeguard = "lifeguard"
	KilledByTimeout   = "timeout"
	KilledByCancel    = "cancel"
)

// Start waits for a slot and starts the job's process: the returned
// Process is running, supervised (lifeguard, hard timeout, cancel through
// ctx) until it ends. An error means the process could not start (or ctx
// ended while queued); once started, every ending (exit, crash, kill) is an
// Output from Wait, never an error.
func (p *Pool) Start(ctx context.Context, job Job) (*Process, error) {
	if job.Confine == nil {
		return nil, ErrUnconfined
	}
	release, err := p.sched.acquire(ctx, job.Priority, job.Class)
	if err != nil {
		return nil, err
	}
	spawntrace.Mark(ctx, "acquire")
	if err := job.Confine.Prepare(ctx, job.Cmd); err != nil {
		release()
		return nil, err
	}
	var pr *proc
	if job.Warm != nil {
		// A warm child that is still alive takes the job; one that died
		// while idle is torn down here and the job starts cold, as if
		// there had been none.
		pr = job.Warm.take(job.Cmd.Stderr)
	}
	if pr == nil {
		if pr, err = p.launchJob(ctx, job); err != nil {
			release()
			return nil, err
		}
	}
	return p.supervise(ctx, job, pr, release), nil
}

// launchJob launches job's command, and once more the command its
// Confiner's Retry gives when that start failed (Retrier).
func (p *Pool) launchJob(ctx context.Context, job Job) (*proc, error) {
	pr, err := p.launch(ctx, job.Cmd, job.Marker, job.Confine, p.limitsOf(job))
	r, ok := job.Confine.(Retrier)
	if err == nil || !ok {
		return pr, err
	}
	cmd, rerr := r.Retry(ctx, job.Cmd, err)
	switch {
	case rerr != nil:
		return nil, rerr
	case cmd == nil:
		return nil, err
	}
	return p.launch(ctx, cmd, job.Marker, job.Confine, p.limitsOf(job))
}

// Run is Start then Wait, the process's lines unread.
func (p *Pool) Run(ctx context.Context, job Job) (*dispatch.Output, error) {
	h, err := p.Start(ctx, job)
	if err != nil {
		return nil, err
	}
	return h.Wait(), nil
}

// proc is a started child process as the pool holds it, from its start to
// the end of its supervision.
type proc struct {
	cmd     *exec.Cmd
	hold    *hold
	pidfd   int
	sp      *pipes
	started time.Time
	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // cmd.Wait's, set before exited closes
}

// launch starts cmd in a session, a containment and (through c) a
// sandbox of its own, with argv[0] and the cgroup named by marker. Its
// leader is waited for from the start; nothing watches it yet.
func (p *Pool) launch(ctx context.Context, cmd *exec.Cmd, marker depth.Marker, c Confiner, lim limits.Set) (*proc, error) {
	if c == nil {
		return nil, ErrUnconfined
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A session of its own (and so a process group led by it): everything
	// it starts is in its session, which is how leftovers are recognised.
	cmd.SysProcAttr.Setsid = true
	name := fmt.Sprintf("job-%d-%d", os.Getpid(), p.seq.Add(1))
	if marker.Task != "" {
		// Where no process below the child can change it: how a brood run
		// from the child's Bash with a stripped environment still knows it
		// is below a child (package depth).
		name = marker.String()
		cmd.Args = append([]string{name}, cmd.Args[1:]...)
	}
	h, err := p.containment(ctx).prepare(ctx, cmd, name, lim)
	if err != nil {
		return nil, err
	}
	// An IPC namespace of its own where its namespaces allow one; where
	// not, start refuses it System V IPC (SharedIPCOnThread).
	sandbox.OwnIPC(cmd)
	spawntrace.Mark(ctx, "cgroup")
	cmd.Env = spawntrace.Env(ctx, cmd.Env) // the child's marks count from the parent's start
	pr := &proc{cmd: cmd, hold: h, pidfd: -1, exited: make(chan struct{})}
	askPidfd(cmd, &pr.pidfd)
	sp, err := newPipes(cmd)
	if err != nil {
		h.started(false)
		return nil, err
	}
	spawntrace.Mark(ctx, "pipes")
	pr.sp = sp
	pr.started = time.Now()
	enter := h.onThread(nil) // born in its cgroups, before any confinement
	err = sandbox.StartMapped(cmd, func() error { return start(ctx, cmd, enter, c) })
	spawntrace.Mark(ctx, "exec")
	sp.started()
	if lerr := h.started(err == nil); lerr != nil && err == nil {
		// It was killed at once: it must never run past its limits.
		_ = cmd.Wait()
		h.teardown(cmd.Process.Pid)
		err = lerr
	}
	if err != nil {
		sp.close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() {
		// The leader's exit is what counts, never the pipe's EOF: a
		// process that left the child's session may hold the pipe forever.
		pr.waitErr = cmd.Wait()
		close(pr.exited)
	}()
	return pr, nil
}

// supervise watches a started process to its end in the background: the
// lifeguard, the hard timeout, the cancel path and its lines. release gives
// its slot back once it has ended.
func (p *Pool) supervise(ctx context.Context, job Job, pr *proc, release func()) *Process {
	cmd, sp, h := pr.cmd, pr.sp, pr.hold
	pid := cmd.Process.Pid
	hp := newProcess(pid, pr.started, sp.stdin, pr.exited)
	k := &killer{pid: pid, pidfd: pr.pidfd, hold: h, grace: p.cfg.KillGrace}
	alive := make(chan struct{}, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(hp.lines)
		readLines(sp.stdout, alive, hp.lines)
	}()
	guardDone := make(chan struct{})
	go func() {
		defer close(guardDone)
		p.watch(ctx, job, k, alive, pr.exited)
	}()
	go func() {
		defer release()
		defer k.close()
		<-pr.exited
		<-guardDone
		k.blameLimit()  // a limit it hit is named
		h.teardown(pid) // nothing the child started outlives it
		hp.closeInput()
		sp.finish(readDone, p.cfg.KillGrace)
		out := &dispatch.Output{
			PID:        pid,
			KilledBy:   k.who(),
			WallMS:     time.Since(pr.started).Milliseconds(),
			StderrTail: sp.tail(),
			Started:    pr.started.UTC(),
			Finished:   time.Now().UTC(),
		}
		fillExit(out, cmd.ProcessState, pr.waitErr)
		if why := h.rlimitBreach(out.StderrTail); why != "" && out.KilledBy == KilledByNone && out.ExitCode != 0 {
			out.KilledBy = why // a limit only an rlimit held (limits_linux.go)
		}
		hp.out = out
		close(hp.done)
	}()
	return hp
}

// start starts cmd from a throw-away locked thread after c confined it.
func start(ctx context.Context, cmd *exec.Cmd, enter func() error, c Confiner) error {
	errc := make(chan error, 1)
	// Never the main thread, and never handed back: the thread (which may
	// carry the child's restriction) dies with the goroutine. It enters the
	// child's cgroups (enter, where the limits need a v1 hierarchy) before
	// the confinement takes cgroupfs out of its reach.
	sandbox.OnThrowawayThread(func() {
		spawntrace.Mark(ctx, "thread")
		if enter != nil {
			if err := enter(); err != nil {
				errc <- err
				return
			}
		}
		spawntrace.Mark(ctx, "cgroup enter")
		// A confined root child's CAP_SYS_ADMIN, for its child's PID
		// namespace, on this thread alone.
		if err := sandbox.NamespacesOnThread(cmd); err != nil {
			errc <- err
			return
		}
		if err := sandbox.SharedIPCOnThread(cmd); err != nil {
			errc <- err
			return
		}
		if err := c.Confine(cmd); err != nil {
			errc <- err
			return
		}
		spawntrace.Mark(ctx, "landlock")
		err := cmd.Start()
		// The child holds its own copies of what was passed it in
		// memory files (its policy, its mount view: sandbox.PassEnv).
		sandbox.ClosePassed(cmd)
		errc <- err
	})
	return <-errc
}

// watch is the lifeguard, the hard timeout and the cancel path for one
// process. It returns when the process has exited.
func (p *Pool) watch(ctx context.Context, job Job, k *killer, alive <-chan struct{}, exited <-chan struct{}) {
	silence := time.NewTimer(p.cfg.HeartbeatTimeout)
	defer silence.Stop()
	var hard <-chan time.Time
	if job.Timeout > 0 {
		t := time.NewTimer(job.Timeout)
		defer t.Stop()
		hard = t.C
	}
	done := ctx.Done()
	var limit <-chan string
	if k.hold.limited() {
		var stop func()
		limit, stop = p.limits.add(k.hold)
		defer stop()
	}
	for {
		select {
		case <-exited:
			return
		case why := <-limit:
			// It hit a limit: it ends, and says which.
			k.kill(why, syscall.SIGKILL)
			limit = nil
		case <-alive:
			if !silence.Stop() {
				select {
				case <-silence.C:
				default:
				}
			}
			silence.Reset(p.cfg.HeartbeatTimeout)
		case <-silence.C:
			// Silent for the whole timeout: it can't be trusted to hear a
			// SIGTERM either.
			k.kill(KilledByLifeguard, syscall.SIGKILL)
		case <-hard:
			go k.staged(KilledByTimeout, exited)
			hard = nil
		case <-done:
			go k.staged(KilledByCancel, exited)
			done = nil
		}
	}
}

// readLines hands every line the child prints to lines (heartbeats marked
// Ping) and tells the lifeguard of each.
func readLines(r io.Reader, alive chan<- struct{}, lines chan<- Line) {
	sc := bufio.NewScanner(r)
	// A child's lines are mostly short (progress, usage, pings): the
	// buffer starts small and grows to a long one's size when it comes.
	sc.Buffer(make([]byte, 0, 4<<10), 64<<20)
	for sc.Scan() {
		select {
		case alive <- struct{}{}:
		default:
		}
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		lines <- Line{Text: append([]byte(nil), line...), Ping: isPing(line)}
	}
	// Drain whatever is left so the child never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

func isPing(line []byte) bool {
	if len(line) > 32 {
		return false
	}
	var v struct {
		Ping bool `json:"ping"`
	}
	return json.Unmarshal(line, &v) == nil && v.Ping
}

// killer signals one child through its pidfd (never a pid number that may
// have been reused) and remembers who killed it first.
type killer struct {
	mu    sync.Mutex
	pid   int
	pidfd int
	hold  *hold
	by    string
	grace time.Duration
}

func (k *killer) kill(by string, sig syscall.Signal) {
	k.mu.Lock()
	if k.by == "" {
		k.by = by
	}
	k.mu.Unlock()
	if sig == syscall.SIGKILL {
		k.hold.killAll(k.pidfd, k.pid)
		return
	}
	signalPidfd(k.pidfd, sig)
}

// staged sends SIGTERM to the child, waits for the grace period, then
// SIGKILL to everything it started if it is still there.
func (k *killer) staged(by string, exited <-chan struct{}) {
	k.kill(by, syscall.SIGTERM)
	t := time.NewTimer(k.grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		k.kill(by, syscall.SIGKILL)
	}
}

func (k *killer) close() {
	if k.pidfd >= 0 {
		closeFD(k.pidfd)
	}
}

func (k *killer) who() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.by == "" {
		return KilledByNone
	}
	return k.by
}

func fillExit(out *dispatch.Output, ps *os.ProcessState, waitErr error) {
	if ps == nil {
		out.ExitCode = -1
		return
	}
	out.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		out.Signal = ws.Signal().String()
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		out.CPUMS = (ru.Utime.Nano() + ru.Stime.Nano()) / int64(time.Millisecond)
		out.PeakRSSKB = ru.Maxrss
	}
	if waitErr != nil && out.ExitCode == 0 && !errors.Is(waitErr, exec.ErrWaitDelay) {
		out.ExitCode = -1
	}
}

// tail keeps the last n bytes written to it.
type tail struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
