package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/sandbox"
)

// warmChild plays a warm child: it waits for the start line, then does a
// cold "ok" child's work. warm-probe first tries, idle, to write outside
// and inside its policy (POOL_OUTSIDE, POOL_INSIDE) and prints what the
// kernel said.
func warmChild(mode string) {
	if mode == "warm-probe" {
		errText := func(err error) string {
			if err == nil {
				return ""
			}
			return err.Error()
		}
		out := errText(os.WriteFile(filepath.Join(os.Getenv("POOL_OUTSIDE"), "escaped"), []byte("x"), 0o644))
		in := errText(os.WriteFile(filepath.Join(os.Getenv("POOL_INSIDE"), "mine"), []byte("x"), 0o644))
		b, _ := json.Marshal(map[string]string{"type": "probe", "outside": out, "inside": in})
		fmt.Println(string(b))
	}
	if os.Getenv("POOL_WARM") != "1" {
		// Started cold (as brood-child without --warm): no start line.
	} else if err := protocol.ReadStart(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "warm child: not started")
		os.Exit(0)
	}
	fmt.Println(`{"type":"progress","tools":["Read"]}`)
	fmt.Fprintln(os.Stderr, "some log line")
	os.Exit(0)
}

// warmJob is a job for a warm helper child of the given mode, and a marker
// naming it.
func warmJob(t *testing.T, mode string, extraEnv ...string) (testJob, *[]string) {
	t.Helper()
	j, lines := job(t, mode, extraEnv...)
	j.Marker = depth.Marker{Task: "W" + strconv.Itoa(os.Getpid()) + strings.ReplaceAll(t.Name(), "/", "_"), Depth: 1, Max: 1}
	return j, lines
}

// cmdOf is the warm form of a job's command (POOL_WARM=1 standing in for
// brood-child's --warm), made anew as a dispatcher does.
func cmdOf(j testJob) *exec.Cmd {
	c := exec.Command(j.Cmd.Path, j.Cmd.Args[1:]...)
	c.Env = append(slices.Clone(j.Cmd.Env), "POOL_WARM=1")
	return c
}

func prestart(t *testing.T, p *Pool, j testJob, onThread func() error) *WarmChild {
	t.Helper()
	w, err := p.Prestart(context.Background(), cmdOf(j), j.Marker, threadConfiner(onThread))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Discard)
	return w
}

func TestWarmChildTakesItsJob(t *testing.T) {
	p := New(Config{})
	cold, coldLines := warmJob(t, "warm")
	// A cold run of the same command: the shape a warm one must match.
	cold.Cmd.Stdin = nil
	coldWarm := prestart(t, p, cold, nil) // also started ahead, then discarded unused
	coldWarm.Discard()
	<-coldWarm.Exited()
	cold.Warm = coldWarm // dead and discarded: the job starts cold
	coldOut, err := cold.run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if coldOut.PID == coldWarm.PID() {
		t.Fatal("a discarded warm child ran a job")
	}

	j, lines := warmJob(t, "warm")
	w := prestart(t, p, j, nil)
	if !w.Idle() {
		t.Fatal("a fresh warm child is not idle")
	}
	j.Warm = w
	// The job's stderr file gets the warm child's stderr, as a cold
	// child's would be that file itself.
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	j.Cmd.Stderr = errFile
	var startedPID int
	j.OnStart = func(pid int) { startedPID = pid }
	out, err := j.run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if out.PID != w.PID() || startedPID != w.PID() {
		t.Fatalf("the job ran in pid %d (OnStart %d), not in the warm child %d", out.PID, startedPID, w.PID())
	}
	if out.ExitCode != 0 || out.KilledBy != KilledByNone || !strings.Contains(out.StderrTail, "some log line") {
		t.Fatalf("warm outcome %+v", out)
	}
	if !slices.Equal(*lines, *coldLines) {
		t.Errorf("warm lines %q, cold lines %q", *lines, *coldLines)
	}
	if w.Idle() {
		t.Error("a warm child that took its job still counts as idle")
	}
	if b, _ := os.ReadFile(errFile.Name()); !strings.Contains(string(b), "some log line") {
		t.Errorf("the job's stderr file holds %q, not the warm child's stderr", b)
	}
	if got, want := jsonKeys(t, j.OutputPath), jsonKeys(t, cold.OutputPath); !slices.Equal(got, want) {
		t.Errorf("output.json of a warm child has keys %v, a cold one's %v", got, want)
	}

	// One job per process: the same warm child is never handed a second.
	j2, _ := warmJob(t, "warm")
	j2.Warm = w
	out2, err := j2.run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if out2.PID == w.PID() {
		t.Fatal("a warm child took a second job")
	}
}

func jsonKeys(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestWarmChildKilledIdleIsNeverHandedAJob(t *testing.T) {
	p := New(Config{})
	j, lines := warmJob(t, "warm")
	w := prestart(t, p, j, nil)
	if err := syscall.Kill(w.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.Exited()
	if w.Idle() {
		t.Fatal("a killed warm child reports idle")
	}
	j.Warm = w
	out, err := j.run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if out.PID == w.PID() {
		t.Fatal("the dead warm child's pid ran the job")
	}
	if out.ExitCode != 0 || len(*lines) != 1 {
		t.Fatalf("the job, started cold instead, ended %+v with lines %q", out, *lines)
	}
	if c := p.containment(context.Background()); c.mode == ContainCgroup {
		// The cold start reused the task's cgroup name; after it nothing is left.
		if _, err := os.Stat(filepath.Join(c.base, j.Marker.String())); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the task's cgroup is still there: %v", err)
		}
	}
}

// TestWarmChildIsContainedAndSandboxedBeforeItStarts looks at an idle warm
// child from outside, through the kernel's tables: its own session and
// process group, its own cgroup named by its marker (or PID namespace),
// no_new_privs and the Landlock policy applied from the parent's thread,
// all before it was sent the start line.
func TestWarmChildIsContainedAndSandboxedBeforeItStarts(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("the kernel has no Landlock: this machine cannot sandbox a child at all")
	}
	outside, inside := t.TempDir(), t.TempDir()
	p := New(Config{})
	j, lines := warmJob(t, "warm-probe", "POOL_OUTSIDE="+outside, "POOL_INSIDE="+inside)
	onThread := func() error {
		_, _, _, err := sandbox.RestrictForChild(sandbox.Policy{ReadOnly: true, Writable: []string{inside}, Network: true})
		return err
	}
	w := prestart(t, p, j, onThread)
	pid := w.PID()
	// The probe writes before it waits for the start line: once its file
	// inside exists, the write outside has been tried.
	waitFile(t, filepath.Join(inside, "mine"), w)
	if _, err := os.Stat(filepath.Join(outside, "escaped")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the idle warm child wrote outside its policy: %v", err)
	}
	f := statFields(t, pid)
	if f[2] != strconv.Itoa(pid) || f[3] != strconv.Itoa(pid) {
		t.Errorf("idle warm child %d: process group %s, session %s; want its own", pid, f[2], f[3])
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if !strings.Contains(string(status), "NoNewPrivs:\t1") {
		t.Errorf("idle warm child has no no_new_privs (the Landlock prerequisite):\n%s", status)
	}
	switch c := p.containment(context.Background()); c.mode {
	case ContainCgroup:
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if !strings.HasSuffix(strings.TrimSpace(string(cg)), "/"+j.Marker.String()) {
			t.Errorf("idle warm child's cgroup %q is not its own (%s)", cg, j.Marker)
		}
	case ContainPIDNS:
		if !regexpNSpid(string(status)) {
			t.Errorf("idle warm child is not the init of its own PID namespace:\n%s", status)
		}
	}
	j.Warm = w
	if _, err := j.run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(*lines) == 0 || !strings.Contains((*lines)[0], "permission denied") || strings.Contains((*lines)[0], `"inside":"open`) {
		t.Fatalf("the probe says %q, want the write outside denied and the one inside allowed", *lines)
	}
}

func waitFile(t *testing.T, path string, w *WarmChild) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-w.Exited():
			t.Fatalf("the warm child exited before writing %s", path)
		default:
		}
		runtime.Gosched()
	}
}

func statFields(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
}

func regexpNSpid(status string) bool {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "NSpid:"); ok {
			return len(strings.Fields(v)) >= 2
		}
	}
	return false
}

func TestWarmChildDiscardedExitsUnstarted(t *testing.T) {
	p := New(Config{})
	j, _ := warmJob(t, "warm")
	w := prestart(t, p, j, nil)
	w.Discard()
	<-w.Exited()
	if w.Idle() {
		t.Fatal("a discarded warm child is idle")
	}
	if c := p.containment(context.Background()); c.mode == ContainCgroup {
		if _, err := os.Stat(filepath.Join(c.base, j.Marker.String())); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a discarded warm child's cgroup is still there: %v", err)
		}
	}
}

// threadConfiner is a Confiner whose Confine is f (nil: nothing).
type threadConfiner func() error

func (threadConfiner) Prepare(context.Context, *exec.Cmd) error { return nil }

func (f threadConfiner) Confine(*exec.Cmd) error {
	if f == nil {
		return nil
	}
	return f()
}
