package depth

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// maxAncestors bounds the ancestry walk (a loop in /proc is impossible, but
// a bound costs nothing).
const maxAncestors = 512

// Scan looks for brood-child markers in this process's own argv[0], its
// ancestors' and its cgroup path. It reads /proc only: a few small files,
// cheap enough for every start.
func Scan() []Found {
	var found []Found
	for _, c := range ownCgroupPath() {
		if m, ok := Parse(c); ok {
			found = append(found, Found{Marker: m, From: SourceCgroup})
		}
	}
	return append(found, scanAncestry()...)
}

// Current is Decide over Scan: this process's place in the tree.
func Current(settingsMax int, getenv func(string) string) Decision {
	return Decide(Scan(), settingsMax, getenv)
}

// scanAncestry walks from this process up to init, reading each process's
// argv[0]. It starts at /proc/self and follows the parent pids /proc shows,
// which are in the numbering of the PID namespace /proc was mounted in (not
// this process's own, under the fallback): so the walk crosses the
// namespaces the fallback creates.
func scanAncestry() []Found {
	var found []Found
	if m, ok := Parse(argv0("self")); ok {
		found = append(found, Found{Marker: m, From: SourceAncestry})
	}
	pid := parentOf("self")
	for i := 0; pid > 1 && i < maxAncestors; i++ {
		id := strconv.Itoa(pid)
		if m, ok := Parse(argv0(id)); ok {
			found = append(found, Found{Marker: m, From: SourceAncestry, PID: pid})
		}
		pid = parentOf(id)
	}
	return found
}

// Argv0 returns a process's argv[0] ("" when it cannot be read).
func Argv0(pid int) string { return argv0(strconv.Itoa(pid)) }

func argv0(id string) string {
	b, err := os.ReadFile("/proc/" + id + "/cmdline")
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parentOf reads a process's parent pid from /proc/<id>/stat (0 if gone).
func parentOf(id string) int {
	b, err := os.ReadFile("/proc/" + id + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// ownCgroupPath is this process's cgroup v2 path split into its components
// (nil without cgroup v2).
func ownCgroupPath() []string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return strings.Split(strings.Trim(p, "/"), "/")
		}
	}
	return nil
}
