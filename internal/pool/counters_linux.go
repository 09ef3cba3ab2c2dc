package pool

import (
	"bytes"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// counterFile is one cgroup events file of a running child (memory.events,
// memory.oom_control, pids.events), kept open for the limits watch: read
// with pread at offset 0 on every tick (the kernel renders it afresh) and
// never reopened. Opening it every 100 ms cost an openat, an fstat and,
// since a cgroup file can be polled, a registration with Go's poller and
// its removal, around each read; a raw descriptor is one pread.
type counterFile struct {
	mu     sync.Mutex
	fd     int  // valid when open
	open   bool // fd is valid
	closed bool // closed for good: the child's cgroups are going away
	buf    [512]byte
}

// count reads "key N" from the file at path (opened on first use), 0 when
// absent, unreadable or closed.
func (c *counterFile) count(path, key string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || path == "" {
		return 0
	}
	if !c.open {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return 0
		}
		c.fd, c.open = fd, true
	}
	n, err := unix.Pread(c.fd, c.buf[:], 0)
	if err != nil || n <= 0 {
		return 0
	}
	return countIn(c.buf[:n], key)
}

// close closes the file for good (a later count reads nothing): before the
// child's cgroups are removed, and never while a count reads it.
func (c *counterFile) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open {
		_ = unix.Close(c.fd)
	}
	c.open, c.closed = false, true
}

// countIn finds "key N" among the lines of b (0 if absent).
func countIn(b []byte, key string) int64 {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(key+" ")); ok {
			n, _ := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return n
		}
	}
	return 0
}
