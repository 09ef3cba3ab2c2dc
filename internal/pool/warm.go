package pool

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/protocol"
)

// WarmChild is a child process started ahead of its job (Prestart): it has
// its session and process group, its containment (a cgroup named by its
// marker, made before the clone) and its sandbox (applied on the thread it
// is cloned from) from its first instruction, exactly as a cold child of
// the same command, and waits on its stdin for protocol.StartLine before
// it reads anything of its task. Nothing watches it while it is idle but
// its own exit: the lifeguard and the hard timeout start when a job takes
// it (Job.Warm). It takes at most one job; one that died while idle is
// never handed one.
type WarmChild struct {
	pr     *proc
	grace  time.Duration
	stderr *handoff // its stderr, until a job names where it goes

	mu    sync.Mutex
	state warmState
}

type warmState int

const (
	warmIdle warmState = iota
	warmTaken
	warmDiscarded
)

// Prestart starts cmd now, as Run would start it for a job with the same
// Cmd, Marker and Confiner (whose Confine it runs; its Prepare is the
// caller's before this), and holds it idle until a job takes it. It
// takes no slot of the scheduler: an idle warm child runs nothing. Its
// stderr is a pipe of the pool's (cmd.Stderr must be nil), copied to the
// taking job's Cmd.Stderr. The caller must Discard it if no job takes it.
func (p *Pool) Prestart(ctx context.Context, cmd *exec.Cmd, marker depth.Marker, c Confiner) (*WarmChild, error) {
	if cmd.Stderr != nil {
		return nil, errors.New("pool: a warm child's stderr is the pool's")
	}
	h := &handoff{}
	cmd.Stderr = h
	pr, err := p.launch(ctx, cmd, marker, c, p.cfg.Limits)
	if err != nil {
		return nil, err
	}
	return &WarmChild{pr: pr, grace: p.cfg.KillGrace, stderr: h}, nil
}

// PID is the warm child's process id (for tests and brood doctor; the pool
// itself knows it by its pidfd).
func (w *WarmChild) PID() int { return w.pr.cmd.Process.Pid }

// Exited is closed once the process has ended, whether idle, discarded or
// after its job.
func (w *WarmChild) Exited() <-chan struct{} { return w.pr.exited }

// Idle reports whether the child is alive and still waits for a job.
func (w *WarmChild) Idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state == warmIdle && !w.dead()
}

// dead reports whether the process has exited (reaped or a zombie).
func (w *WarmChild) dead() bool {
	select {
	case <-w.pr.exited:
		return true
	default:
	}
	return pidfdExited(w.pr.pidfd)
}

// take hands the child its job: nil when it is not idle, or when it died
// (it is then torn down, and the job starts cold). From here its
// supervision is the job's.
func (w *WarmChild) take(stderr io.Writer) *proc {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != warmIdle {
		return nil
	}
	if w.dead() {
		w.discardLocked()
		return nil
	}
	// A child that died since has no reader on its stdin: the write fails
	// (EPIPE) and it is never counted as having taken the job.
	if _, err := w.pr.sp.stdin.Write(protocol.StartLine); err != nil {
		w.discardLocked()
		return nil
	}
	w.state = warmTaken
	w.pr.started = time.Now()
	w.stderr.set(stderr)
	return w.pr
}

// Discard ends an idle warm child: its stdin closes (it exits without
// reading its envelope), it and anything it started are killed, and its
// containment is torn down. A taken child is its job's: Discard leaves it.
func (w *WarmChild) Discard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == warmIdle {
		w.discardLocked()
	}
}

func (w *WarmChild) discardLocked() {
	w.state = warmDiscarded
	pr := w.pr
	pr.sp.stdin.Close()
	pid := pr.cmd.Process.Pid
	pr.hold.killAll(pr.pidfd, pid)
	<-pr.exited
	pr.hold.teardown(pid)
	pr.sp.discard()
	if pr.pidfd >= 0 {
		closeFD(pr.pidfd)
		pr.pidfd = -1
	}
}

// handoff is a warm child's stderr as the pool copies it: held (up to
// tailSize) until the job that takes the child says where it goes, then
// passed on.
type handoff struct {
	mu   sync.Mutex
	to   io.Writer
	gone bool // to is decided
	buf  []byte
}

func (h *handoff) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone {
		if h.to != nil {
			_, _ = h.to.Write(p)
		}
		return len(p), nil
	}
	if room := tailSize - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// set sends what was held, and everything after, to w (nil: nowhere).
func (h *handoff) set(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.to, h.gone = w, true
	if w != nil && len(h.buf) > 0 {
		_, _ = w.Write(h.buf)
	}
	h.buf = nil
}
