package dispatch

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Proc is what /proc/<pid>/stat says of a process that matters to brood.
type Proc struct {
	PID, PPID, PGRP, Session int
	State                    string // R, S, D, Z, ...
	Flags                    uint64 // the kernel's PF_* flags of its leader (of the thread, for a thread's stat)
}

// pfExiting is the kernel's PF_EXITING: set when a task starts to exit.
const pfExiting = 0x4

// pfKthread is the kernel's PF_KTHREAD: a kernel thread, never a task's
// process (its command line is empty, as an exec's is for an instant).
const pfKthread = 0x00200000

// ReadProc reads one process's stat line; false when there is no such
// process (or no /proc).
func ReadProc(pid int) (Proc, bool) {
	return readStat(fmt.Sprintf("/proc/%d/stat", pid), pid)
}

// readStat reads one stat file: a process's, or one thread's of it.
func readStat(path string, pid int) (Proc, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Proc{}, false
	}
	s := string(b)
	// The command name is in parentheses and may hold spaces or ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp session ...
	if len(f) < 4 {
		return Proc{}, false
	}
	p := Proc{PID: pid, State: f[0]}
	p.PPID, _ = strconv.Atoi(f[1])
	p.PGRP, _ = strconv.Atoi(f[2])
	p.Session, _ = strconv.Atoi(f[3])
	if len(f) > 6 {
		p.Flags, _ = strconv.ParseUint(f[6], 10, 64)
	}
	return p, true
}

// liveThread reports whether some thread of pid is neither dead nor
// exiting. A process whose leader exits while another thread runs on is
// alive: the other thread executing a new image (the kernel ends every
// other thread, the leader first, and the new image takes the leader's
// pid), or a leader that left by itself. A process that ends has every
// thread exiting within an instant of its exit_group.
func liveThread(pid int) bool {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		t, ok := readStat(dir+"/"+e.Name()+"/stat", pid)
		if ok && t.State != "Z" && t.State != "X" && t.Flags&pfExiting == 0 {
			return true
		}
	}
	return false
}

// Procs reads every process in /proc.
func Procs() []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := ReadProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// OwnPIDNS is the inode of this process's PID namespace (/proc/self/ns/pid),
// 0 when it cannot be read.
func OwnPIDNS() uint64 {
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
