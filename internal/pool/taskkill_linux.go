package pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/depth"
)

// Killed is what KillTask did, for the person who asked.
type Killed struct {
	Owner  []int  // the processes holding the task's lock
	PIDs   []int  // the task's children that were signalled
	Cgroup string // the task's cgroup, when it has one
	How    string // "SIGTERM" or "SIGTERM, then cgroup.kill" / "SIGTERM, then SIGKILL"
}

// ErrNoOwner means no process holds the task's lock: its parent is gone,
// so no child of it can be running under brood's watch.
var ErrNoOwner = errors.New("no process owns the task (its parent is gone)")

// ErrQueued means the task's owner holds it but has started no process for
// it yet (it waits for a pool slot): there is nothing to stop yet.
var ErrQueued = errors.New("the task is queued (waiting for a pool slot in its parent): no process of it runs yet")

// KillTask stops task id's child from a process that did not start it (brood
// tasks kill), without trusting anything the child can write. The proof that
// a process is that task's child comes from the kernel alone:
//
//   - the task's owner is the process holding the flock on lockPath (the
//     task directory, or a lock file), as /proc/locks says (matched by
//     device and inode, not followed if it is a link);
//   - the child is a direct child of the owner whose argv[0] is the task's
//     depth.Marker, set by the owner's pool at clone time, and that is in
//     the cgroup the pool made for the task (named by the same marker) or
//     the init of a PID namespace of its own (the pool's fallback) under an
//     owner that is not one itself (an init reaps its namespace's orphans,
//     a tool's own namespace init among them): argv[0]
//     alone any process the owner's tools start can forge (`exec -a`), and
//     for a nested task the owner's tools are its own direct children; the
//     process is then pinned with pidfd_open and checked again, so a pid
//     reused in between is never signalled;
//   - where the pool put it in a cgroup (named by the same marker), the
//     final stage is that cgroup's cgroup.kill, which takes everything the
//     child started; under the PID-namespace fallback, SIGKILL to the
//     namespace's init does the same.
//
// It sends SIGTERM, waits up to grace for the child to exit, then kills.
// No pid from a record is ever signalled. queued (nil: never asked) says
// whether the task's records show it waiting for a pool slot: the look for
// its child then stops at once with ErrQueued. Those records may be the
// owner's to write (a nested task's): they only ever stop the look, never
// choose what is signalled.
func KillTask(ctx context.Context, id, lockPath string, grace time.Duration, queued func() bool) (Killed, error) {
	var k Killed
	owners, err := lockHolders(lockPath)
	if err != nil {
		return k, err
	}
	if len(owners) == 0 {
		return k, ErrNoOwner
	}
	k.Owner = owners
	kids, err := findChildren(ctx, id, lockPath, owners, findWait, queued)
	if err != nil {
		return k, fmt.Errorf("task %s: %w", id, err)
	}
	if len(kids) == 0 {
		return k, fmt.Errorf("task %s: its owner (pid %d) has no contained child process of this task (queued, already finishing, or started without a cgroup of its own and under an owner whose tools' processes it cannot be told apart from: stop it from its parent)", id, owners[0])
	}
	defer func() {
		for _, c := range kids {
			unix.Close(c.pidfd)
		}
	}()
	k.How = "SIGTERM"
	for _, c := range kids {
		k.PIDs = append(k.PIDs, c.pid)
		if c.cgroup != "" {
			k.Cgroup = c.cgroup
		}
		_ = unix.PidfdSendSignal(c.pidfd, unix.SIGTERM, nil, 0)
	}
	if allExit(ctx, kids, grace) {
		waitReleased(ctx, lockPath, owners, grace)
		return k, nil
	}
	for _, c := range kids {
		if c.cgroup != "" {
			k.How = "SIGTERM, then cgroup.kill"
			_ = os.WriteFile(filepath.Join(c.cgroup, "cgroup.kill"), []byte("1"), 0)
			continue
		}
		k.How = "SIGTERM, then SIGKILL"
		_ = unix.PidfdSendSignal(c.pidfd, unix.SIGKILL, nil, 0)
	}
	allExit(ctx, kids, grace)
	waitReleased(ctx, lockPath, owners, grace)
	return k, nil
}

// findWait bounds how long KillTask looks for a task's child that its
// owner still runs but the kernel's tables do not show as the task's yet.
const findWait = 5 * time.Second

// findChildren is taskChildren, looked for again until one is found, the
// owner lets go of the task's lock (the child ended: it is finishing), the
// task is queued (ErrQueued), or d has passed. A child can be in the owner's hands and still not be
// recognisable for a moment: while it re-executes itself (a binary with
// cgo confines itself that way), from a thread other than its first, its
// leader is a zombie with no argv until the kernel hands the pid over to
// the new image (TestKillTaskFindsAChildMidExec).
func findChildren(ctx context.Context, id, lockPath string, owners []int, d time.Duration, queued func() bool) ([]pinned, error) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if kids := taskChildren(id, owners); len(kids) > 0 {
			return kids, nil
		}
		if queued != nil && queued() {
			return nil, ErrQueued
		}
		if now, err := lockHolders(lockPath); err != nil || !overlaps(now, owners) || !time.Now().Before(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-tick.C:
		}
	}
}

// waitReleased waits, up to d, for the owner to let go of the task's lock:
// it does once it has recorded how the task ended, so that the listing
// never shows a task that was killed as running.
func waitReleased(ctx context.Context, lockPath string, owners []int, d time.Duration) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		now, err := lockHolders(lockPath)
		if err != nil || !overlaps(now, owners) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func overlaps(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// pinned is a task child held by a pidfd.
type pinned struct {
	pid, pidfd int
	cgroup     string // its cgroup directory, if named for the task
}

// taskChildren finds the direct children of owners whose argv[0] marks
// them as task id's child and that are contained as the pool contains one
// (its cgroup, or a PID namespace's init), pinned by pidfds.
func taskChildren(id string, owners []int) []pinned {
	isOwner := map[int]bool{}
	for _, o := range owners {
		isOwner[o] = true
	}
	ents, _ := os.ReadDir("/proc")
	var out []pinned
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !isTaskChild(pid, id, isOwner) {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		// Pinned: from here the pid cannot be reused. Was it still the
		// task's child when we pinned it?
		cg := taskCgroup(pid, id)
		if !isTaskChild(pid, id, isOwner) || cg == "" && !ownNSInit(pid) {
			unix.Close(fd)
			continue
		}
		out = append(out, pinned{pid: pid, pidfd: fd, cgroup: cg})
	}
	return out
}

func isTaskChild(pid int, id string, isOwner map[int]bool) bool {
	m, ok := depth.Parse(depth.Argv0(pid))
	if !ok || m.Task != id {
		return false
	}
	p, ok := readStat(pid)
	return ok && isOwner[p.ppid] && p.state != "Z"
}

// pidNSInit reports whether pid is the init of a PID namespace below the
// one this process sees it from (/proc/PID/status's NSpid: its pid in each
// namespace, outermost first, ends in 1). Only the process that clones it
// with CLONE_NEWPID makes one: a direct child of the owner that is one was
// started by the owner's pool, not by a tool, whose own namespaces' inits
// are the tool's children.
func pidNSInit(pid int) bool {
	f := nsPIDs(pid)
	return len(f) >= 2 && f[len(f)-1] == "1"
}

// nsPIDs are pid's ids in each PID namespace it is in, the reader's
// first (/proc/PID/status NSpid); none when it cannot be read.
func nsPIDs(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

// ownNSInit reports whether pid is a PID namespace's init that its parent
// made: pidNSInit, under a parent that is not one itself. A parent that is
// a PID namespace's init (every child of a pool in pidns mode; a root that
// is pid 1 of the killer's own namespace, review36 P3-5) reaps the
// orphans of its namespace, so a tool's own namespace init, orphaned,
// becomes its direct child: then being an init proves nothing.
func ownNSInit(pid int) bool {
	p, ok := readStat(pid)
	return ok && initUnder(nsPIDs(pid), nsPIDs(p.ppid))
}

// initUnder reports whether a process with the namespace ids child is a
// PID namespace's init (pid 1 of a namespace below the reader's) under a
// parent with the ids parent that reaps no orphans: pid 1 of no namespace,
// the reader's own included.
func initUnder(child, parent []string) bool {
	isInit := len(child) >= 2 && child[len(child)-1] == "1"
	reaps := len(parent) >= 1 && parent[len(parent)-1] == "1"
	return isInit && !reaps
}

// taskCgroup is the cgroup directory of pid when it is the one the pool
// made for task id ("" otherwise).
func taskCgroup(pid int, id string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	mnt, err := CgroupMount()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		p, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		if m, ok := depth.Parse(p); ok && m.Task == id {
			return filepath.Join(mnt, p)
		}
	}
	return ""
}

// allExit waits until every pinned process has exited (its pidfd turns
// readable), up to d.
func allExit(ctx context.Context, kids []pinned, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for _, c := range kids {
		for {
			left := time.Until(deadline)
			if left <= 0 || ctx.Err() != nil {
				return false
			}
			fds := []unix.PollFd{{Fd: int32(c.pidfd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, int(min(left, 100*time.Millisecond)/time.Millisecond)+1)
			if err == nil && n > 0 {
				break
			}
			if err != nil && !errors.Is(err, unix.EINTR) {
				return false
			}
		}
	}
	return true
}

type stat struct {
	ppid  int
	state string
}

func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return stat{ppid: ppid, state: f[0]}, true
}

// lockHolders lists the processes holding a flock on path, from
// /proc/locks (the kernel's table, matched by device and inode). A task's
// lock is a flock on its directory; an older brood held a .lock file in
// it, whose holders count too (when it is a regular file: a link there is
// no one's).
func lockHolders(path string) ([]int, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, nil
		}
		return nil, fmt.Errorf("task lock %s: %w", path, err)
	}
	inodes := []unix.Stat_t{st}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		var lf unix.Stat_t
		if unix.Lstat(filepath.Join(path, ".lock"), &lf) == nil && lf.Mode&unix.S_IFMT == unix.S_IFREG {
			inodes = append(inodes, lf)
		}
	default:
		return nil, fmt.Errorf("task lock %s is neither a directory nor a regular file; refusing to trust it", path)
	}
	var want []string
	for _, st := range inodes {
		want = append(want, fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino))
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 00:2a:56789 0 EOF
		fl := strings.Fields(sc.Text())
		if len(fl) < 6 || fl[1] != "FLOCK" || fl[2] == "->" || !slices.ContainsFunc(want, func(w string) bool { return sameFile(fl[5], w) }) {
			continue
		}
		if pid, err := strconv.Atoi(fl[4]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, sc.Err()
}

// TaskLockHolders are the processes holding the flock on a task's lock
// path (its directory, or its .lock file), as /proc/locks says: the
// task's live owners. None when there is none or it cannot be told.
func TaskLockHolders(path string) []int {
	pids, _ := lockHolders(path)
	return pids
}

// sameFile compares /proc/locks' maj:min:inode with want, ignoring how many
// hex digits the device numbers were printed with.
func sameFile(got, want string) bool {
	g, w := strings.Split(got, ":"), strings.Split(want, ":")
	if len(g) != 3 || len(w) != 3 {
		return false
	}
	for i := range 2 {
		a, err1 := strconv.ParseUint(g[i], 16, 32)
		b, err2 := strconv.ParseUint(w[i], 16, 32)
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	}
	return g[2] == w[2]
}
