package depth

import (
	"bytes"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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
	// Down to pid 1: in a child's PID namespace (pool) the child itself
	// is its init.
	for i := 0; pid >= 1 && i < maxAncestors; i++ {
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
	var buf [256]byte
	b, ok := readProc("/proc/"+id+"/cmdline", buf[:0], true)
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parentOf reads a process's parent pid from /proc/<id>/stat (0 if gone).
func parentOf(id string) int {
	var buf [512]byte
	b, ok := readProc("/proc/"+id+"/stat", buf[:0], false)
	if !ok {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// ownCgroupPath is this process's cgroup v2 path split into its components
// (nil without cgroup v2).
func ownCgroupPath() []string {
	var buf [512]byte
	b, ok := readProc("/proc/self/cgroup", buf[:0], false)
	if !ok {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return strings.Split(strings.Trim(p, "/"), "/")
		}
	}
	return nil
}

// readProc reads a /proc file into buf (grown as needed): whole, or with
// firstField only up to its first NUL (a command line's argv[0]). It is
// open, read and close, without os.ReadFile's two fstat calls: a root
// reads two files of every ancestor, twice, before its first request.
func readProc(path string, buf []byte, firstField bool) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, max(cap(buf), 512))...)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, false
		case n == 0:
			return buf, true
		}
		buf = buf[:len(buf)+n]
		if firstField && bytes.IndexByte(buf[len(buf)-n:], 0) >= 0 {
			return buf, true
		}
	}
}
