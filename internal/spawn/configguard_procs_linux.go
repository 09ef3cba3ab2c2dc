//go:build linux

package spawn

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/taskdir"
)

// What a crashed root's in-place child may still run outside a cgroup of
// its own (configguard_cgroup_linux.go covers the cgroup). Under pidns
// containment the child is the init of a PID namespace of its own, and
// every process it starts (a setsid daemon too) is in that namespace: the
// kernel kills them all when the init exits, and does not let the init's
// exit complete (its pidfd poll readable, its zombie) before they are
// gone. So killing the child, known by its pid and start time, empties
// the namespace; a child that is gone left nothing behind.
//
// Before the record names the child (the root died between the child's
// start and the record's rewrite), it is found by what the root gave it
// before it ran a thing: argv[0], the task's depth.Marker, at clone time.
// A process is taken for it only if it also is the init of a PID namespace
// of its own (what a tool starts from inside the child is in the child's
// namespace and dies with it), runs as this user, started after the
// record's root did, and has no live owner of the task for a parent (a
// root that resumed the task since holds its lock; its child is marked
// the same).

// taskProc is a process of a crashed task pinned by a pidfd: a signal
// sent through it reaches that process or none (its pid number, once it
// is reaped, can be another's: nothing is sent by the number alone).
type taskProc struct {
	pid, pidfd int
	init       bool // the init of a PID namespace of its own
}

// taskProcs pins the processes of rec's child still running outside its
// cgroup (see above): under none containment (no cgroup, no namespace)
// the members of the child's process group too, its leader alive or not.
func taskProcs(rec *guardRecord) []taskProc {
	if rec.Child != nil {
		var out []taskProc
		if p, ok := pinProc(rec.Child.PID, func(pid int) bool { return rec.Child.alive() }); ok {
			out = append(out, p)
		}
		if rec.Cgroup == "" && (len(out) == 0 || !out[0].init) {
			out = append(out, groupProcs(rec)...)
		}
		return out
	}
	// A task resumed since by a live root (it holds the task's lock) has
	// children of that root's marked the same: never these.
	owners := map[int]bool{}
	for _, pid := range pool.TaskLockHolders(filepath.Join(taskdir.Open(rec.Project).DispatchRoot(), rec.TaskID)) {
		owners[pid] = true
	}
	is := func(pid int) bool { return orphanOf(rec, pid) && !owners[procPPID(pid)] }
	ents, _ := os.ReadDir("/proc")
	var out []taskProc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !is(pid) {
			continue
		}
		if p, ok := pinProc(pid, is); ok {
			out = append(out, p)
		}
	}
	return out
}

// procPPID is pid's parent's pid (/proc/PID/stat field 4), 0 when unknown.
func procPPID(pid int) int {
	f := procStatus(pid, "PPid:")
	if len(f) == 0 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[0])
	return ppid
}

// pinProc opens a pidfd on pid and checks, once it is pinned, that it is
// still the process is says it is.
func pinProc(pid int, is func(int) bool) (taskProc, bool) {
	if !is(pid) {
		return taskProc{}, false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return taskProc{}, false
	}
	init := pidNSInit(pid) // read before the check that pid is still it
	if !is(pid) {
		unix.Close(fd)
		return taskProc{}, false
	}
	return taskProc{pid: pid, pidfd: fd, init: init}, true
}

// groupProcs pins the members of the process group of rec's named child
// (pool: Setsid, so the group's number is the child's pid): processes of
// that group and session running as this user, started no earlier than
// the child. A live process with the child's pid and another start time
// means the number was reused, which the kernel does only once the
// child's group is empty: then there is none.
func groupProcs(rec *guardRecord) []taskProc {
	n := rec.Child.PID
	if st := procStart(n); st != "" && st != rec.Child.Start {
		return nil
	}
	since, err := strconv.ParseUint(rec.Child.Start, 10, 64)
	if err != nil {
		return nil
	}
	is := func(pid int) bool {
		pgid, sid, start := procGroup(pid)
		return pgid == n && sid == n && start >= since && procUID(pid) == os.Getuid()
	}
	ents, _ := os.ReadDir("/proc")
	var out []taskProc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == n || pid == os.Getpid() || !is(pid) {
			continue
		}
		if p, ok := pinProc(pid, is); ok {
			out = append(out, p)
		}
	}
	return out
}

// procGroup is pid's process group, session and start time (fields 5, 6
// and 22 of /proc/PID/stat); zeros when there is no such live process.
func procGroup(pid int) (pgid, sid int, start uint64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, 0, 0
	}
	pgid, _ = strconv.Atoi(f[2])
	sid, _ = strconv.Atoi(f[3])
	start, _ = strconv.ParseUint(f[19], 10, 64)
	return pgid, sid, start
}

// orphanOf reports whether pid is rec's unnamed child (see above): argv[0]
// marks it as the task's, it is a PID namespace's init, runs as this user
// and started after rec's root.
func orphanOf(rec *guardRecord, pid int) bool {
	m, ok := depth.Parse(depth.Argv0(pid))
	if !ok || m.Task != rec.TaskID || !pidNSInit(pid) || procUID(pid) != os.Getuid() {
		return false
	}
	state, start := procStat(pid)
	owner, err1 := strconv.ParseUint(rec.Owner.Start, 10, 64)
	began, err2 := strconv.ParseUint(start, 10, 64)
	return err1 == nil && err2 == nil && began >= owner && state != "Z" && state != "X"
}

// pidNSInit reports whether pid is the init of a PID namespace below this
// process's (/proc/PID/status's NSpid ends in 1).
func pidNSInit(pid int) bool {
	f := procStatus(pid, "NSpid:")
	return len(f) >= 2 && f[len(f)-1] == "1"
}

// procUID is pid's real uid, -1 when unknown.
func procUID(pid int) int {
	f := procStatus(pid, "Uid:")
	if len(f) == 0 {
		return -1
	}
	uid, err := strconv.Atoi(f[0])
	if err != nil {
		return -1
	}
	return uid
}

// procStatus is the fields of the line of /proc/PID/status named key.
func procStatus(pid int, key string) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

// stopTaskProcs kills ps, each through its pidfd, and waits, bounded,
// for each to end; it reports whether all did. Under none containment ps
// holds the members of the child's process group (groupProcs) found by
// one scan of /proc; one forked after it is reached only by the group's
// number, signalled too, once, while a pinned member of the group has
// not exited (it holds the number: the kernel reuses it only once the
// group is empty). What left the child's session is out of reach there.
func stopTaskProcs(rec *guardRecord, ps []taskProc) bool {
	if rec.Child != nil && rec.Cgroup == "" {
		for _, p := range ps {
			if pgid, _, _ := procGroup(p.pid); !p.init && pgid == rec.Child.PID && !pidfdEnds(p.pidfd, 0) {
				_ = syscall.Kill(-rec.Child.PID, syscall.SIGKILL)
				break
			}
		}
	}
	ok := true
	for _, p := range ps {
		_ = unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
		if !pidfdEnds(p.pidfd, 10*time.Second) {
			ok = false
		}
		unix.Close(p.pidfd)
	}
	return ok
}

// pidfdEnds waits up to d for the process of fd to exit (its pidfd polls
// readable: for a namespace's init, once the namespace is empty).
func pidfdEnds(fd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds()))
		if err == nil && n > 0 {
			return true
		}
		if err != unix.EINTR || left == 0 {
			return false
		}
	}
}
