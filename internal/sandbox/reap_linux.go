package sandbox

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReapOrphans makes a process that is the init of its PID namespace (pid
// 1: a child the pool started in a namespace of its own) reap the orphans
// the kernel hands it: a command's `(cmd &)` leaves its background process
// to pid 1, and without a reaper every one of them stays a zombie, until
// they fill the child's process limit and it is killed (review prochide
// P2). It returns at once; a goroutine reaps on every SIGCHLD for the
// process's life. Elsewhere (not pid 1) it does nothing.
//
// It never takes the exit status of a process this one started itself:
// os/exec holds a pidfd of each child from its clone until it has waited
// for it, so a zombie of which this process holds a pidfd is left to its
// Wait (reaping it would make that Wait fail). An orphan was started by
// another process: this one holds no pidfd of it. Where pidfds do not work
// (os/exec then holds none) it reaps nothing.
func ReapOrphans() {
	if os.Getpid() != 1 || !pidfdsWork() {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGCHLD)
	go func() {
		reapZombies()
		for range ch {
			reapZombies()
		}
	}()
}

// pidfdsWork makes the checks os/exec makes before it uses pidfds (Go's
// os.checkPidfd): pidfd_open of itself, waitid(P_PIDFD) answering ECHILD,
// pidfd_send_signal of 0. Where one fails (an old kernel, a syscall
// filter), os/exec holds no pidfd of its children.
func pidfdsWork() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var info unix.Siginfo
	for {
		err = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED, nil)
		if err != unix.EINTR {
			break
		}
	}
	return err == unix.ECHILD && unix.PidfdSendSignal(fd, 0, nil, 0) == nil
}

// reapZombies reaps every zombie child of this process of which it holds
// no pidfd (see ReapOrphans). Its children are read from /proc (the
// child's own, or the host's: their pids there are turned into this
// namespace's from NSpid).
func reapZombies() {
	ids, _ := statusIDs("self")
	level := len(ids) - 1 // this namespace's place in NSpid
	if level < 0 {
		return
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		for _, c := range strings.Fields(string(b)) {
			ids, zombie := statusIDs(c)
			if !zombie || len(ids) <= level {
				continue
			}
			pid, err := strconv.Atoi(ids[level])
			if err != nil {
				continue
			}
			reapOne(pid)
		}
	}
}

// reapOne pins pid with a pidfd and reaps it if it is a zombie child of
// which no other pidfd is held here. Pinned first: a pid reused in between
// is the new process's, judged as itself.
func reapOne(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	who := pidfdPid(strconv.Itoa(fd))
	if who == "" || heldElsewhere(fd, who) {
		return
	}
	var info unix.Siginfo
	_ = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
}

// heldElsewhere reports whether a descriptor of this process other than
// fd is a pidfd of the process /proc numbers who.
func heldElsewhere(fd int, who string) bool {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return true // cannot tell: leave it
	}
	self := strconv.Itoa(fd)
	for _, e := range ents {
		if e.Name() != self && pidfdPid(e.Name()) == who {
			return true
		}
	}
	return false
}

// pidfdPid is the pid (in /proc's numbering) of the process that this
// process's descriptor fd is a pidfd of, "" when it is none.
func pidfdPid(fd string) string {
	if l, err := os.Readlink("/proc/self/fd/" + fd); err != nil || l != "anon_inode:[pidfd]" {
		return ""
	}
	b, err := os.ReadFile("/proc/self/fdinfo/" + fd)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// statusIDs are process pid's ids in each PID namespace it is in, /proc's
// first (status NSpid), and whether it is a zombie.
func statusIDs(pid string) (ids []string, zombie bool) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return nil, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			ids = strings.Fields(v)
		}
		if v, ok := strings.CutPrefix(line, "State:"); ok {
			zombie = strings.HasPrefix(strings.TrimSpace(v), "Z")
		}
	}
	return ids, zombie
}
