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
	return append(found, scanAncestry(os.Getpid())...)
}

// Current is Decide over Scan: this process's place in the tree.
func Current(settingsMax int, getenv func(string) string) Decision {
	return Decide(Scan(), settingsMax, getenv)
}

// scanAncestry walks from pid up to init, reading each process's argv[0].
// /proc is read in the initial PID namespace's numbering (as it is mounted),
// so the walk crosses the namespaces the fallback creates.
func scanAncestry(pid int) []Found {
	var found []Found
	for i := 0; pid > 1 && i < maxAncestors; i++ {
		if m, ok := Parse(Argv0(pid)); ok {
			found = append(found, Found{Marker: m, From: SourceAncestry, PID: pid})
		}
		pid = parentOf(pid)
	}
	return found
}

// Argv0 returns a process's argv[0] ("" when it cannot be read).
func Argv0(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parentOf reads a process's parent pid from /proc/<pid>/stat (0 if gone).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
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
