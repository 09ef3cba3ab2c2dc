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

// taskProc is a process of a crashed task pinned by a pidfd: its pid can
// no longer be reused under us.
type taskProc struct {
	pid, pidfd int
	init       bool // the init of a PID namespace of its own
}

// taskProcs pins the processes of rec's child still running outside its
// cgroup (see above).
func taskProcs(rec *guardRecord) []taskProc {
	if rec.Child != nil {
		if p, ok := pinProc(rec.Child.PID, func(pid int) bool { return rec.Child.alive() }); ok {
			return []taskProc{p}
		}
		return nil
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
	if !is(pid) {
		unix.Close(fd)
		return taskProc{}, false
	}
	return taskProc{pid: pid, pidfd: fd, init: pidNSInit(pid)}, true
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

// stopTaskProcs kills ps and waits, bounded, for each to end; it reports
// whether all did. A named child that is no namespace's init and has no
// cgroup of its own (containment none, which brood doctor says) has its
// process group killed too, as its pool would: what left its session is
// out of anyone's reach there.
func stopTaskProcs(rec *guardRecord, ps []taskProc) bool {
	ok := true
	for _, p := range ps {
		if !p.init && rec.Cgroup == "" {
			_ = syscall.Kill(-p.pid, syscall.SIGKILL) // its session's group (pool: Setsid), led by the pinned child
		}
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
