//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// parkedThreads is how many extra OS threads a "caps" test child holds
// while it restricts itself, so that the drop must reach threads other
// than the runtime's few.
const parkedThreads = 8

// parkThreads locks n goroutines to n OS threads that stay until release
// is closed; it returns once every thread exists.
func parkThreads(n int, release <-chan struct{}) {
	started := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			started <- struct{}{}
			<-release
		}()
	}
	for range n {
		<-started
	}
}

// capsOf parses the Cap* lines of a /proc status file (hexadecimal) and
// its NoNewPrivs and Seccomp lines (decimal).
func capsOf(status string) (map[string]uint64, error) {
	caps := map[string]uint64{}
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":\t")
		base := 16
		switch {
		case !ok:
			continue
		case k == "NoNewPrivs" || k == "Seccomp":
			base = 10
		case !strings.HasPrefix(k, "Cap"):
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), base, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", line, err)
		}
		caps[k] = n
	}
	if len(caps) < 7 {
		return nil, fmt.Errorf("no capability, no_new_privs or seccomp lines in %q", status)
	}
	return caps, nil
}

// execCeiling is the most a program started from a thread with these sets
// can be permitted: the bounding set (root's exec gives every capability
// in it), and under no_new_privs no more than the thread's own permitted
// set (the kernel intersects the two), beside its inheritable and ambient
// sets (which capsWrong requires empty).
func execCeiling(caps map[string]uint64) uint64 {
	c := caps["CapBnd"]
	if caps["NoNewPrivs"] == 1 {
		c &= caps["CapPrm"]
	}
	return c | caps["CapInh"] | caps["CapAmb"]
}

// capsWrong says what in caps exceeds what a confined child may hold: no
// ambient or inheritable capability, no_new_privs and the syscall filter
// (where this architecture has one) on every thread; for root, nothing
// outside keptCaps that a program it starts could be given (execCeiling:
// the bounding set, or the permitted set under no_new_privs) and, for a
// program it started, in the permitted and effective sets; for any other
// user, no capability at all but the bounding set (which an unprivileged
// exec cannot use).
func capsWrong(who string, caps map[string]uint64, program bool) []string {
	limit := map[string]uint64{"CapInh": 0, "CapAmb": 0, "CapPrm": 0, "CapEff": 0}
	var bad []string
	if os.Geteuid() == 0 {
		// Beside what its programs are bounded to (execCeiling), a root
		// child confined in place keeps CAP_SETPCAP and, permitted only,
		// CAP_SYS_ADMIN (capsEveryThread).
		limit["CapPrm"] = keptCaps | 1<<unix.CAP_SETPCAP | 1<<unix.CAP_SYS_ADMIN
		limit["CapEff"] = keptCaps | 1<<unix.CAP_SETPCAP
		if program {
			limit["CapPrm"], limit["CapEff"] = keptCaps, keptCaps
		}
		if c := execCeiling(caps); c&^keptCaps != 0 {
			bad = append(bad, fmt.Sprintf("%s: a program it starts may hold %016x beyond %016x (bounding %016x, permitted %016x, no_new_privs %d)",
				who, c&^keptCaps, uint64(keptCaps), caps["CapBnd"], caps["CapPrm"], caps["NoNewPrivs"]))
		}
	}
	for k, max := range limit {
		if caps[k]&^max != 0 {
			bad = append(bad, fmt.Sprintf("%s: %s %016x holds %016x beyond %016x", who, k, caps[k], caps[k]&^max, max))
		}
	}
	if caps["NoNewPrivs"] != 1 {
		bad = append(bad, who+": no no_new_privs")
	}
	if FilterAvailable() && caps["Seccomp"] != 2 {
		bad = append(bad, fmt.Sprintf("%s: seccomp mode %d, not a filter", who, caps["Seccomp"]))
	}
	return bad
}

// capsCheck runs in a restricted test child ("caps"), parkedThreads extra
// threads held since before Restrict: the first program it starts, right
// after Restrict returned, a command it starts for its model
// (StartCommand, whose bounding set a root child cuts to keptCaps too, as
// the attack suite reads it), and then every thread of the child hold no
// capability a confined child may not (capsWrong).
func capsCheck(release chan struct{}) int {
	defer close(release)
	var bad []string
	out, err := exec.Command("cat", "/proc/self/status").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start a program:", err)
		return 1
	}
	caps, err := capsOf(string(out))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bad = append(bad, capsWrong("program started first", caps, true)...)
	var cmdOut strings.Builder
	cmd := exec.Command("cat", "/proc/self/status")
	cmd.Stdout = &cmdOut
	c, err := StartCommand(cmd, false)
	if err == nil {
		err = c.Wait()
	}
	if err == nil {
		caps, err = capsOf(cmdOut.String())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "a command for the model:", err)
		return 1
	}
	bad = append(bad, capsWrong("command for the model", caps, true)...)
	if _, reexec := os.LookupEnv(forceReexecEnv); os.Geteuid() == 0 && InPlace() && !reexec {
		// In place (ABI 5), or a writer's re-exec with a scope (ABI 6 and
		// later), which keeps CAP_SYS_ADMIN for this and cuts it at its
		// Restrict (reexecKeeps). (Re-executed as with cgo, root's exec
		// left it keptCaps: its children's PID namespaces ask for a user
		// namespace, as they always did.)
		bad = append(bad, pidnsCheck()...)
	}
	if os.Geteuid() == 0 && caps["CapBnd"]&^keptCaps != 0 {
		bad = append(bad, fmt.Sprintf("command for the model: CapBnd %016x holds %016x beyond %016x", caps["CapBnd"], caps["CapBnd"]&^keptCaps, uint64(keptCaps)))
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	read := 0
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a thread gone since the listing (the command's throw-away one) holds nothing
		}
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		read++
		caps, err := capsOf(string(b))
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		tid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if caps["CapEff"]&(1<<unix.CAP_SYS_ADMIN) != 0 && threadEnds(tid) {
			continue // pidnsCheck's throw-away thread (NamespacesOnThread), gone since
		}
		bad = append(bad, capsWrong("thread "+strconv.Itoa(tid), caps, false)...)
	}
	if read < parkedThreads+1 {
		bad = append(bad, fmt.Sprintf("only %d threads read, want more than %d", read, parkedThreads))
	}
	if len(bad) > 0 {
		fmt.Fprintln(os.Stderr, strings.Join(bad, "\n"))
		return 1
	}
	return 0
}

// threadEnds reports whether thread tid of this process is gone or ends
// within ten seconds: a throw-away thread a start made CAP_SYS_ADMIN
// effective on (NamespacesOnThread) outlives the start by a moment. It
// waits on a pidfd of the thread (PIDFD_THREAD, Linux 6.9), readable once
// the thread has exited.
func threadEnds(tid int) bool {
	const pidfdThread = unix.O_EXCL // PIDFD_THREAD
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 10_000)
	return err == nil && n == 1
}

// pidnsCheck, in a root test child restricted in place: a program started in a PID
// namespace of its own, as the pool starts this child's children where it
// cannot make cgroups, needs no user namespace (the id maps Landlock
// forbids this process to write), starts from a throw-away thread that
// makes CAP_SYS_ADMIN effective for it (NamespacesOnThread) and holds no
// more than a confined program may.
func pidnsCheck() []string {
	var out strings.Builder
	cmd := exec.Command("cat", "/proc/self/status")
	cmd.Stdout = &out
	AddNamespaces(cmd, syscall.CLONE_NEWPID, nil)
	if cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		return []string{"a PID namespace asks for a user namespace too: this child has no CAP_SYS_ADMIN left to make one with"}
	}
	err := startInNamespaces(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return []string{"start in a PID namespace: " + err.Error()}
	}
	caps, err := capsOf(out.String())
	if err != nil {
		return []string{err.Error()}
	}
	bad := capsWrong("program in a PID namespace", caps, true)
	if !regexp.MustCompile(`(?m)^NSpid:.*\t1$`).MatchString(out.String()) {
		bad = append(bad, "the program is not the init of a PID namespace of its own")
	}
	return bad
}

// TestNoCapabilityLeftOnAnyThread: a child started as brood starts an
// overlay child (its own user namespace, where the kernel gives it every
// capability) holds, once Restrict returns, nothing a confined child may
// not on any of its threads, and the first program it starts gets nothing
// more: in place (a domain without scope, ABI 5 here: root's permitted
// set is cut under no_new_privs on every thread, allThreads) and by
// re-executing (a domain with scope, or forced: the bounding set cut on
// the thread it re-executes from). On a bare base (bareBase) the child
// starts without no_new_privs, so that what sets it on the threads parked
// before Restrict is the filter's TSYNC (filterEveryThread), not the
// base's thread.
func TestNoCapabilityLeftOnAnyThread(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("kernel has no Landlock: no child is confined by it")
	}
	t.Logf("this binary restricts in place: %v (CGO_ENABLED=0)", InPlace())
	for _, env := range [][]string{nil, {abiCapEnv + "=5"}, {forceReexecEnv + "=1"}, {bareBase, abiCapEnv + "=5"}} {
		t.Run(fmt.Sprint(env), func(t *testing.T) {
			p := Policy{Writable: []string{t.TempDir()}}
			res := startOnBase(t, p, "caps", env...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			if res.status.Mechanism != "landlock" || (os.Geteuid() == 0 && res.status.Caps != capsNote) {
				t.Errorf("status %+v", res.status)
			}
		})
	}
}

// dropBenchEnv makes the test binary a child that times one way of
// cutting its capabilities ("bounding" or "capset") and prints the figures.
const dropBenchEnv = "SANDBOX_TEST_DROP_BENCH"

// dropBenchChild cuts what a program this process starts can hold, on
// every thread, as Restrict did (each capability outside keptCaps dropped
// from the bounding set: "bounding") or does (no_new_privs, then one
// capset of the permitted set: "capset"), and prints how long until the
// call returned and until a program could be started after it, in
// nanoseconds.
func dropBenchChild(mode string) int {
	if os.Geteuid() != 0 || !InPlace() {
		fmt.Fprintln(os.Stderr, "needs root and a binary without cgo")
		return 1
	}
	t0 := time.Now()
	switch mode {
	case "bounding":
		if err := dropBoundingEveryThread(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "capset":
		if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
			fmt.Fprintln(os.Stderr, e)
			return 1
		}
		if err := capsEveryThread(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	returned := time.Since(t0)
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	forked := time.Since(t0)
	cmd.Wait()
	fmt.Println(returned.Nanoseconds(), forked.Nanoseconds())
	return 0
}

// BenchmarkBoundingDrop times the capability cut of a root child in its
// own user namespace (the kernel gives it every capability there), each
// way dropBenchChild knows: until the call returns (the child's start-up
// path) and until its first program could start, each b.N children
// started for each way. Needs root and
// CGO_ENABLED=0 (AllThreadsSyscall).
func BenchmarkBoundingDrop(b *testing.B) {
	if os.Geteuid() != 0 || !InPlace() {
		b.Skip("needs root and a binary without cgo (CGO_ENABLED=0)")
	}
	for _, mode := range []string{"bounding", "capset"} {
		b.Run(mode, func(b *testing.B) {
			var ret, fork time.Duration
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), dropBenchEnv+"="+mode)
				AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, nil)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v", err)
				}
				var r, f int64
				if _, err := fmt.Sscan(string(out), &r, &f); err != nil {
					b.Fatalf("child said %q: %v", out, err)
				}
				ret += time.Duration(r)
				fork += time.Duration(f)
			}
			b.ReportMetric(float64(ret.Microseconds())/float64(b.N), "µs-to-return")
			b.ReportMetric(float64(fork.Microseconds())/float64(b.N), "µs-to-first-fork")
		})
	}
}
