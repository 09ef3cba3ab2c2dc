package pool

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/sandbox"
)

// TestForkServerStatusesAndKills holds the fork server prototype
// (forkserver_linux_test.go) to what the pool promises of a start: the
// root waits for a child the helper started and reads how it really
// ended, kills it through the pidfd it got, and a helper killed under a
// running child neither takes the child with it nor leaves a start
// hanging.
func TestForkServerStatusesAndKills(t *testing.T) {
	needUserNS(t)
	s := startSpawner(t)
	code, status, err := startHelped(s, true, 7, func() {})
	if err != nil || code != cldExited || status != 7 {
		t.Fatalf("a child that exits 7: code %d status %d, %v; want exited, 7", code, status, err)
	}

	sleeper := func() (*childPipes, spawnReply) {
		t.Helper()
		p, err := newChildPipes()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.close)
		r, err := s.call(spawnReq{op: 's', ns: true, exit: 255}, p.fds())
		if err != nil {
			t.Fatal(err)
		}
		p.closeTheirs()
		t.Cleanup(func() { unix.Close(r.pidfd) })
		return p, r
	}
	_, r := sleeper()
	// It holds its three streams and nothing of the helper's (its socket:
	// a child holding it could ask for starts of its own), looked at once
	// sleep sleeps: while the dynamic loader runs it holds libc open.
	asleep(t, r.pid)
	if fds := openFDs(t, r.pid); !slices.Equal(fds, []string{"0", "1", "2"}) {
		var what []string
		for _, fd := range fds[min(3, len(fds)):] {
			l, _ := os.Readlink("/proc/" + strconv.FormatInt(r.pid, 10) + "/fd/" + fd)
			what = append(what, fd+"→"+l)
		}
		t.Errorf("a child the helper started holds descriptors %v (%v), want only 0 1 2", fds, what)
	}
	if err := unix.PidfdSendSignal(r.pidfd, unix.SIGKILL, nil, 0); err != nil {
		t.Fatal(err)
	}
	if code, status, err := waitPidfd(r.pidfd); err != nil || code != cldKilled || status != int32(unix.SIGKILL) {
		t.Fatalf("a child killed through its pidfd: code %d status %d, %v; want killed by 9", code, status, err)
	}

	// The helper dies under a running child: the child is the root's, not
	// the helper's, so it lives on, and the root still kills and waits it.
	_, r = sleeper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
	if !alive(t, r.pidfd) {
		t.Fatal("the child died with the helper")
	}
	if err := unix.PidfdSendSignal(r.pidfd, unix.SIGKILL, nil, 0); err != nil {
		t.Fatal(err)
	}
	if code, status, err := waitPidfd(r.pidfd); err != nil || code != cldKilled || status != int32(unix.SIGKILL) {
		t.Fatalf("after the helper's death: code %d status %d, %v; want killed by 9", code, status, err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := startHelped(s, true, 0, func() {}); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNREFUSED) && !errors.Is(err, unix.ECONNRESET) {
			t.Fatalf("a start after the helper's death: %v, want a broken socket", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a start after the helper's death hung")
	}
}

// alive says whether the process a pidfd refers to still runs: its pidfd
// polls readable once it has exited.
func alive(t *testing.T, pidfd int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n == 0
}

// TestUnshareStartIsTheSameChild holds BenchmarkSpawnFork's exec/unshare
// start to what it stands for: a child in a user and a mount namespace of
// its own, as today's start makes (Cloneflags), its ids mapped to
// themselves, though it made them itself after the fork.
func TestUnshareStartIsTheSameChild(t *testing.T) {
	needUserNS(t)
	ours := nsOf(t, "self")
	for _, unshare := range []bool{false, true} {
		cmd := exec.Command("/bin/sh", "-c", "cat /proc/self/uid_map /proc/self/gid_map; readlink /proc/self/ns/user /proc/self/ns/mnt")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, nil)
		if unshare {
			unshareNamespaces(cmd.SysProcAttr)
		}
		var out []byte
		errc := make(chan error, 1)
		sandbox.OnThrowawayThread(func() {
			var err error
			out, err = cmd.Output()
			errc <- err
		})
		if err := <-errc; err != nil {
			t.Fatalf("unshare=%v: %v", unshare, err)
		}
		f := strings.Fields(string(out))
		uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
		want := []string{uid, uid, "1", gid, gid, "1"}
		if len(f) != 8 || !slices.Equal(f[:6], want) {
			t.Fatalf("unshare=%v: the child's maps and namespaces: %q, want maps %v", unshare, f, want)
		}
		if f[6] == ours[0] || f[7] == ours[1] {
			t.Errorf("unshare=%v: the child shares a namespace with its parent: %q against ours %q", unshare, f[6:], ours)
		}
	}
}

// needUserNS skips a test on a machine where no process may make a user
// namespace: every child of a read-only or isolated task needs one.
func needUserNS(t *testing.T) {
	t.Helper()
	if r := sandbox.ProbeUserNS(t.Context()); !r.UserNS {
		t.Skipf("no user namespaces here: %s", r.Errors["user_namespaces"])
	}
}

// openFDs lists the descriptors process pid holds.
func openFDs(t *testing.T, pid int64) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.FormatInt(pid, 10) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for _, e := range ents {
		fds = append(fds, e.Name())
	}
	slices.SortFunc(fds, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	return fds
}

// nsOf is a process's user and mount namespaces, as readlink shows them.
func nsOf(t *testing.T, pid string) [2]string {
	t.Helper()
	var ns [2]string
	for i, n := range []string{"user", "mnt"} {
		l, err := os.Readlink("/proc/" + pid + "/ns/" + n)
		if err != nil {
			t.Fatal(err)
		}
		ns[i] = l
	}
	return ns
}

// asleep waits until process pid is blocked in (clock_)nanosleep, as
// /proc/PID/syscall shows it: /bin/sleep past its loader and start.
func asleep(t *testing.T, pid int64) {
	t.Helper()
	want := []string{strconv.Itoa(unix.SYS_NANOSLEEP), strconv.Itoa(unix.SYS_CLOCK_NANOSLEEP)}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.FormatInt(pid, 10) + "/syscall")
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b)); len(f) > 0 && slices.Contains(want, f[0]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never went to sleep: /proc/%d/syscall %q", pid, pid, b)
		}
	}
}
