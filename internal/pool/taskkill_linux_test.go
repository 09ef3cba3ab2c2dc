package pool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/sandbox"
)

// TestLockHolders: the owner of a task is found from the flock on its
// directory, or on the .lock file an older brood held in it; a link in the
// directory's place is refused, a link at .lock is no one's.
func TestLockHolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hold := func(path string) *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if got, err := lockHolders(dir); err != nil || len(got) != 0 {
		t.Fatalf("nobody holds it: %v, %v", got, err)
	}
	d := hold(dir)
	if got, err := lockHolders(dir); err != nil || !slices.Contains(got, os.Getpid()) {
		t.Errorf("directory lock: %v, %v; want this process", got, err)
	}
	d.Close()
	if err := os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l := hold(filepath.Join(dir, ".lock"))
	if got, err := lockHolders(dir); err != nil || !slices.Contains(got, os.Getpid()) {
		t.Errorf("legacy .lock: %v, %v; want this process", got, err)
	}
	l.Close()
	link := filepath.Join(t.TempDir(), "task")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, err := lockHolders(link); err == nil {
		t.Error("a link in the task directory's place was trusted")
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "victim"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v := hold(filepath.Join(other, "victim"))
	defer v.Close()
	if err := os.Remove(filepath.Join(dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "victim"), filepath.Join(dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	if got, err := lockHolders(dir); err != nil || len(got) != 0 {
		t.Errorf("a link at .lock counted: %v, %v", got, err)
	}
}

// TestKillTaskFindsAChildMidExec: a task's child that its owner runs but
// that the kernel's tables do not show as the task's for a moment (while it
// re-executes itself, its leader is a zombie with no argv) is looked for
// again, not reported as "no child process of this task" (the flake of
// attack's TestTasksKillIgnoresTheRecordedPID under load). Here the child
// takes the task's marker as its argv[0] a moment after it starts.
func TestKillTaskFindsAChildMidExec(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	id := "01TESTMIDEXEC"
	marker := depth.Marker{Task: id, Depth: 1, Max: 1}.String()
	dur := uniqueSleep()
	child := exec.Command("bash", "-c", `sleep 0.2; exec -a "$0" sleep "$1"`, marker, dur)
	// Contained as the pool's fallback contains one: the init of a PID
	// namespace of its own (argv[0] alone is no proof: TestKillTaskRefusesAnImpostor).
	sandbox.AddNamespaces(child, syscall.CLONE_NEWPID, nil)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	if kids := taskChildren(id, []int{os.Getpid()}); len(kids) != 0 {
		t.Fatalf("the child was the task's at once (%d found): the test did not reach its scenario", len(kids))
	}
	k, err := KillTask(t.Context(), id, dir, 100*time.Millisecond, nil, nil)
	if err != nil {
		t.Fatalf("KillTask: %v", err)
	}
	if len(k.PIDs) != 1 || k.PIDs[0] != child.Process.Pid {
		t.Fatalf("signalled %v, want the child %d", k.PIDs, child.Process.Pid)
	}
	if err := child.Wait(); err == nil {
		t.Fatal("the child exited 0: it was not stopped")
	}
	if left := procsWith(dur); len(left) > 0 {
		t.Fatalf("the child %v outlived the kill", left)
	}
}

// holdTask makes a task directory held by this process's flock, as an
// owner holds it, and returns it.
func holdTask(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestKillTaskRefusesAnImpostor: a direct child of the owner that took the
// task's marker as its argv[0] (`exec -a`, as a nested owner's Bash tool
// can) but is in neither the task's cgroup nor a PID namespace of its own
// is not the task's child: it is not signalled, and the kill does not say
// it stopped the task (review29 P3-3).
func TestKillTaskRefusesAnImpostor(t *testing.T) {
	dir := holdTask(t)
	id := "01TESTIMPOSTOR"
	marker := depth.Marker{Task: id, Depth: 1, Max: 1}.String()
	dur := uniqueSleep()
	impostor := exec.Command("bash", "-c", `exec -a "$0" sleep "$1"`, marker, dur)
	if err := impostor.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { impostor.Process.Kill(); impostor.Wait() }()
	marked := func() bool {
		m, ok := depth.Parse(depth.Argv0(impostor.Process.Pid))
		return ok && m.Task == id
	}
	deadline := time.Now().Add(time.Minute) // a deadline, not a wait: until the exec is seen
	for !marked() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !marked() {
		t.Fatalf("the impostor never took the marker as its argv[0]: the test did not reach its scenario")
	}
	k, err := KillTask(t.Context(), id, dir, 100*time.Millisecond, nil, nil)
	if err == nil {
		t.Fatalf("KillTask stopped %v and said so: an argv[0] was taken for the task's child", k.PIDs)
	}
	if len(procsWith(dur)) == 0 {
		t.Fatal("the impostor was signalled")
	}
}

// TestKillTaskSaysQueuedAtOnce: while the task's records say it waits for
// a pool slot, the kill says so at once instead of looking for its child
// until findWait has passed.
func TestKillTaskSaysQueuedAtOnce(t *testing.T) {
	dir := holdTask(t)
	start := time.Now()
	_, err := KillTask(t.Context(), "01TESTQUEUED", dir, 100*time.Millisecond, func() bool { return true }, nil)
	if !errors.Is(err, ErrQueued) {
		t.Fatalf("KillTask of a queued task: %v, want ErrQueued", err)
	}
	if took := time.Since(start); took >= findWait {
		t.Fatalf("said queued after %s: it looked for the child the whole findWait (%s)", took, findWait)
	}
}

// TestKillTaskRefusesAReparentedNSInit: an owner that is itself a PID
// namespace's init (every child of a pool in pidns mode) reaps its
// namespace's orphans. A tool of it starts `unshare -Urpf` whose child,
// init of a namespace of its own, takes the task's marker as argv[0]; the
// unshare is killed and the impostor becomes the owner's direct child. It
// is not signalled (review36 P1-1; the reviewer's reproduction).
func TestKillTaskRefusesAReparentedNSInit(t *testing.T) {
	if out, err := exec.Command("unshare", "-Urpf", "true").CombinedOutput(); err != nil {
		t.Skipf("unshare -Urpf does not work here: %v %s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "task")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := "01TESTREPARENTED"
	marker := depth.Marker{Task: id, Depth: 2, Max: 3}.String()
	dur := uniqueSleep()
	tool := `unshare -Urpf bash -c 'exec -a ` + marker + ` sleep ` + dur + `' & U=$!; while ! pgrep -f -- '` + marker + `' >/dev/null; do sleep 0.01; done; kill -9 $U; exec sleep ` + dur
	owner := exec.Command("unshare", "-Urpf", "--kill-child", "flock", dir, "bash", "-c", tool)
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { owner.Process.Kill(); owner.Wait() }()
	deadline := time.Now().Add(time.Minute) // a deadline, not a wait: until the impostor is the owner's
	var imp int
	for imp == 0 && time.Now().Before(deadline) {
		holders, _ := lockHolders(dir)
		for _, pid := range procsWith(dur) {
			if m, ok := depth.Parse(depth.Argv0(pid)); ok && m.Task == id {
				if st, ok := readStat(pid); ok && slices.Contains(holders, st.ppid) && pidNSInit(pid) && pidNSInit(st.ppid) {
					imp = pid
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if imp == 0 {
		t.Fatal("no impostor re-parented to the owner: the test did not reach its scenario")
	}
	k, err := KillTask(t.Context(), id, dir, 100*time.Millisecond, nil, nil)
	if err == nil || slices.Contains(k.PIDs, imp) {
		t.Fatalf("KillTask: %+v, %v: the re-parented namespace init %d was taken for the task's child", k, err, imp)
	}
	if !slices.Contains(procsWith(dur), imp) {
		t.Fatal("the impostor was signalled")
	}
}

// TestInitUnderAReaper (review36 P3-5): a namespace init proves a task's
// child only under a parent that reaps no orphans; a parent that is pid 1
// of the killer's own namespace (a root brood as a container's entry
// point, killed from a shell in the container: its NSpid is just "1")
// reaps them as any namespace's init does.
func TestInitUnderAReaper(t *testing.T) {
	for _, tc := range []struct {
		name          string
		child, parent []string
		want          bool
	}{
		{"an init under a plain parent", []string{"4321", "1"}, []string{"4300"}, true},
		{"an init under an init below the reader's", []string{"4321", "5", "1"}, []string{"4300", "1"}, false},
		{"an init under pid 1 of the reader's namespace", []string{"5", "1"}, []string{"1"}, false},
		{"no init", []string{"4321"}, []string{"4300"}, false},
		{"unreadable", nil, []string{"4300"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := initUnder(tc.child, tc.parent); got != tc.want {
				t.Errorf("initUnder(%v, %v) = %v, want %v", tc.child, tc.parent, got, tc.want)
			}
		})
	}
}

// TestKillTaskCallsFoundOnlyForAChild: found (where `brood tasks kill`
// records the kill) runs only once the task's child is found and before
// any signal: not for a kill that finds none, and an error from it stops
// the kill with the child untouched.
func TestKillTaskCallsFoundOnlyForAChild(t *testing.T) {
	dir := holdTask(t)
	calls := 0
	found := func() error { calls++; return errors.New("cannot record") }
	if _, err := KillTask(t.Context(), "01TESTNOCHILD", dir, 100*time.Millisecond, func() bool { return false }, found); err == nil || calls != 0 {
		t.Fatalf("a kill with no child: err %v, found called %d times; want an error and no call", err, calls)
	}
	id := "01TESTFOUND"
	dur := uniqueSleep()
	child := exec.Command("bash", "-c", `exec -a "$0" sleep "$1"`, depth.Marker{Task: id, Depth: 1, Max: 1}.String(), dur)
	sandbox.AddNamespaces(child, syscall.CLONE_NEWPID, nil)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	if _, err := KillTask(t.Context(), id, dir, 100*time.Millisecond, nil, found); err == nil || err.Error() != "cannot record" || calls != 1 {
		t.Fatalf("found failed: err %v, found called %d times; want its error, once", err, calls)
	}
	if len(procsWith(dur)) == 0 {
		t.Fatal("the child was signalled although found failed")
	}
}

// nsOwnerMain is the test binary as a nested task's owner that is its PID
// namespace's init (a pool child with a namespace of its own): it holds
// the task's lock (POOL_DIR) and starts the task's child as a pool does,
// the init of a PID namespace of its own with the task's marker as argv[0]
// (os/exec holds a pidfd of it), then waits for it.
func nsOwnerMain() {
	lock, err := os.Open(os.Getenv("POOL_DIR"))
	if err != nil || syscall.Flock(int(lock.Fd()), syscall.LOCK_EX) != nil {
		os.Exit(7)
	}
	c := exec.Command("bash", "-c", `exec -a "$0" sleep "$1"`, os.Getenv("POOL_MARKER"), os.Getenv("POOL_SLEEP"))
	sandbox.AddNamespaces(c, syscall.CLONE_NEWPID, nil)
	if err := c.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "start the task's child: %v\n", err)
		os.Exit(8)
	}
	_ = c.Wait()
	os.Exit(0)
}

// TestKillTaskTakesAnInitOwnersOwnChild: a nested task's owner that is
// its PID namespace's init (as every pool child is once it has a PID
// namespace of its own) reaps orphans, so being a namespace init under it
// proves nothing by itself (TestKillTaskRefusesAReparentedNSInit); the
// child it started itself, of which it holds a pidfd, is the task's and is
// stopped (review prochide P1: a nested task could not be killed).
func TestKillTaskTakesAnInitOwnersOwnChild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := "01TESTINITOWNER"
	marker := depth.Marker{Task: id, Depth: 2, Max: 3}.String()
	dur := uniqueSleep()
	owner := exec.Command(os.Args[0])
	owner.Env = append(os.Environ(), "POOL_CHILD=nsowner", "POOL_DIR="+dir, "POOL_MARKER="+marker, "POOL_SLEEP="+dur)
	sandbox.AddNamespaces(owner, syscall.CLONE_NEWPID, nil)
	var stderr bytes.Buffer
	owner.Stderr = &stderr
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- owner.Wait() }()
	defer func() { owner.Process.Kill(); <-ended }()
	deadline := time.Now().Add(time.Minute) // a deadline, not a wait: until the owner's child runs
	var kid int
	for kid == 0 && time.Now().Before(deadline) {
		select {
		case err := <-ended:
			ended <- err
			if strings.Contains(stderr.String(), "start the task's child") {
				// A PID namespace within the owner's cannot be made here
				// (as an unprivileged user, a nested user namespace's maps).
				t.Skipf("the owner cannot start a child in a PID namespace of its own here: %v: %s", err, stderr.String())
			}
			t.Fatalf("the owner ended: %v: %s", err, stderr.String())
		default:
		}
		for _, pid := range procsWith(dur) {
			if m, ok := depth.Parse(depth.Argv0(pid)); ok && m.Task == id && pidNSInit(pid) {
				kid = pid
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if kid == 0 || !pidNSInit(owner.Process.Pid) {
		t.Fatalf("the owner (an init: %v) started no marked namespace init: the test did not reach its scenario", pidNSInit(owner.Process.Pid))
	}
	k, err := KillTask(t.Context(), id, dir, 100*time.Millisecond, nil, nil)
	if err != nil || !slices.Equal(k.PIDs, []int{kid}) {
		t.Fatalf("KillTask: %+v, %v; want the owner's own child %d stopped", k, err, kid)
	}
	if left := procsWith(dur); len(left) > 0 {
		t.Fatalf("the task's child %v outlived the kill", left)
	}
}
