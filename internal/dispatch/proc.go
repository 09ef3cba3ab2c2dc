package dispatch

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Proc is what /proc/<pid>/stat says of a process that matters to brood.
type Proc struct {
	PID, PPID, PGRP, Session int
	State                    string // R, S, D, Z, ...
	Flags                    uint64 // the kernel's PF_* flags of its leader
}

// pfExiting is the kernel's PF_EXITING: set when a task starts to exit.
const pfExiting = 0x4

// ReadProc reads one process's stat line; false when there is no such
// process (or no /proc).
func ReadProc(pid int) (Proc, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
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
