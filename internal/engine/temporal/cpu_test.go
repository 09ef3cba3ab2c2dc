package temporal_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuUse is CPU time (user and system) so far: the benchmark's process
// (its in-process workers, submitter and local engine), its waited-for
// children (the brood children, git) and the dev server.
type cpuUse struct {
	self, children, server time.Duration
}

// cpuNow reads the CPU times now; server is the dev server's pid.
func cpuNow(server int) cpuUse {
	var u cpuUse
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.self = tv(ru.Utime) + tv(ru.Stime)
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		u.children = tv(ru.Utime) + tv(ru.Stime)
	}
	u.server = procCPU(server)
	return u
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// procCPU is a process's own user and system time from /proc (in
// USER_HZ ticks, 100 a second on Linux), 0 if unreadable.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// perCall is the CPU used since u, per call of k, in ms.
func (u cpuUse) perCall(server, k int) string {
	n := cpuNow(server)
	f := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(k) }
	return fmt.Sprintf("CPU ms/call: server %.1f, bench process %.1f, children %.1f, total %.1f",
		f(n.server-u.server), f(n.self-u.self), f(n.children-u.children),
		f(n.server-u.server+n.self-u.self+n.children-u.children))
}

// perCallOwn is perCall with the children split: own, the CPU of the n
// brood children that ended since u (childLedger), and the rest of what
// this process waited for (git).
func (u cpuUse) perCallOwn(server, k int, own time.Duration, n int) string {
	n0 := cpuNow(server)
	f := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(k) }
	return fmt.Sprintf("%s (brood children %.1f over %d, other programs %.1f)",
		u.perCall(server, k), f(own), n, f(n0.children-u.children-own))
}
