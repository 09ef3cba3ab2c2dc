package temporal_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/testbrood"
)

// workerProc is a `brood worker` process (this test binary acting as
// brood) over its own repository.
type workerProc struct {
	t    *testing.T
	p    *project
	cmd  *exec.Cmd
	out  *bytes.Buffer
	mu   sync.Mutex
	end  chan struct{}
	name string
}

// startWorkerProc starts `brood worker` on queue and waits until it polls.
func startWorkerProc(t *testing.T, addr, queue, script, store string, conc int) *workerProc {
	t.Helper()
	return startWorkerProcWith(t, addr, queue, script, store, conc, "")
}

// startWorkerProcWith is startWorkerProc with more settings (TOML).
func startWorkerProcWith(t *testing.T, addr, queue, script, store string, conc int, more string) *workerProc {
	t.Helper()
	return startWorkerProcEnv(t, addr, queue, script, store, conc, more)
}

// startWorkerProcEnv is startWorkerProcWith with more environment (which
// wins over the scripted model's: a loopback model server's).
func startWorkerProcEnv(t *testing.T, addr, queue, script, store string, conc int, more string, env ...string) *workerProc {
	t.Helper()
	return startWorkerProcOn(t, newProject(t, script), addr, queue, store, conc, more, env...)
}

// startWorkerProcOn is startWorkerProcEnv over project p (a worker
// restarted on its repository and home).
func startWorkerProcOn(t *testing.T, p *project, addr, queue, store string, conc int, more string, env ...string) *workerProc {
	t.Helper()
	testbrood.FleetWorkerKey(t, p.home) // the fleet's workers trust each other
	settings := "[pool]\nkill_grace = \"2s\"\nheartbeat_timeout = \"3s\"\nping_interval = \"100ms\"\n" + more
	if err := os.WriteFile(filepath.Join(p.root, ".brood", "settings.toml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "worker", "--temporal", addr, "--task-queue", queue, "--concurrency", fmt.Sprint(conc), "--store", store, "--allow-unsigned")
	cmd.Dir = p.root
	cmd.Env = append(append([]string(nil), p.env...), "BROOD_MODEL=script:"+p.script, "BROOD_PING_INTERVAL=100ms", "BROOD_HEARTBEAT_TIMEOUT=3s")
	if more != "" {
		// The worker's own settings are its operator's to trust.
		cmd.Env = append(cmd.Env, "BROOD_TRUST_PROJECT=1")
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &workerProc{t: t, p: p, cmd: cmd, out: &bytes.Buffer{}, end: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.name = fmt.Sprintf(":%d", cmd.Process.Pid)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			w.mu.Lock()
			w.out.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
			if strings.HasPrefix(sc.Text(), "brood worker: task queue") {
				once.Do(func() { close(ready) })
			}
		}
		_ = cmd.Wait()
		close(w.end)
	}()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			t.Logf("worker %s stderr:\n%s", w.name, w.log())
		}
	})
	select {
	case <-ready:
	case <-w.end:
		t.Fatalf("brood worker exited while starting:\n%s", w.log())
	case <-time.After(90 * time.Second):
		t.Fatalf("brood worker did not start polling within 90s:\n%s", w.log())
	}
	return w
}

func (w *workerProc) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// kill sends SIGKILL to the worker (and only it: its children are its
// pool's, and see their parent die) and waits for it to exit.
func (w *workerProc) kill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.end
}

// owns reports whether a worker identity is this process's.
func (w *workerProc) owns(identity string) bool { return strings.HasSuffix(identity, w.name) }

// taskDirs is the task ids this worker's repository holds.
func (w *workerProc) taskDirs() map[string]bool {
	out := map[string]bool{}
	ents, _ := os.ReadDir(filepath.Join(w.p.root, ".brood", "dispatch"))
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// pending is a run's pending activities, as the server sees them.
func pending(t *testing.T, c client.Client, id string) []pendingCall {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil
	}
	var out []pendingCall
	for _, a := range d.GetPendingActivities() {
		pc := pendingCall{Worker: a.GetLastWorkerIdentity(), Attempt: int(a.GetAttempt()), Started: a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED}
		if hd := a.GetHeartbeatDetails(); hd != nil && len(hd.GetPayloads()) > 0 {
			var hb temporal.Heartbeat
			if err := converterFromPayload(hd.GetPayloads()[0], &hb); err == nil {
				pc.HB = hb
			}
		}
		out = append(out, pc)
	}
	return out
}

type pendingCall struct {
	Worker  string
	Attempt int
	Started bool
	HB      temporal.Heartbeat
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond) // polling a server's observable state, with a deadline
	}
}
