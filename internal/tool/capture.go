package tool

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// capture collects a command's output within a memory bound. It keeps the
// whole output in memory up to limit bytes; past that it moves everything
// into a file (so nothing is lost) and remembers only the head and the tail
// for the inline result, since the start shows what ran and the end shows
// how it finished.
type capture struct {
	mu      sync.Mutex
	limit   int
	dir     string
	buf     []byte // everything, until the limit is passed
	head    []byte // first limit/2 bytes, once spilled
	tail    []byte // last limit/2 bytes, once spilled
	total   int64
	spilled bool
	file    *os.File
	fileErr error
}

func newCapture(limit int, dir string) *capture {
	return &capture{limit: limit, dir: dir}
}

// Write is called by both the stdout and stderr copiers, hence the lock.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if !c.spilled {
		if len(c.buf)+len(p) <= c.limit {
			c.buf = append(c.buf, p...)
			return len(p), nil
		}
		c.spill()
	}
	if c.file != nil {
		if _, err := c.file.Write(p); err != nil {
			c.fileErr = err
			c.file.Close()
			c.file = nil
		}
	}
	c.keep(p)
	return len(p), nil
}

// spill moves the buffered output into a new file under dir; from now on
// only the head and the tail stay in memory.
func (c *capture) spill() {
	c.spilled = true
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		c.fileErr = err
	} else if f, err := os.CreateTemp(c.dir, "bash-output-*.txt"); err != nil {
		c.fileErr = err
	} else if _, err := f.Write(c.buf); err != nil {
		f.Close()
		c.fileErr = err
	} else {
		c.file = f
	}
	c.keep(c.buf)
	c.buf = nil
}

// keep fills the head first, then slides the rest through the tail.
func (c *capture) keep(p []byte) {
	if room := c.limit/2 - len(c.head); room > 0 {
		n := min(room, len(p))
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	c.keepTail(p)
}

func (c *capture) keepTail(p []byte) {
	half := c.limit - c.limit/2
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*half {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-half:]...)
	}
}

// finish closes the file and renders the inline text: everything, or the
// head and the tail around a note saying how much was cut and where the
// whole is.
func (c *capture) finish() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.spilled {
		return string(c.buf)
	}
	half := c.limit - c.limit/2
	tail := c.tail[max(0, len(c.tail)-half):]
	head := trimToLine(string(c.head), true)
	tl := trimToLine(string(tail), false)
	cut := c.total - int64(len(head)) - int64(len(tl))
	var where string
	if c.file != nil {
		name := c.file.Name()
		c.file.Close()
		c.file = nil
		where = fmt.Sprintf("the whole output (%d bytes) is in %s; Read it with offset/limit or Grep it", c.total, name)
	} else {
		where = fmt.Sprintf("the whole output (%d bytes) could not be saved: %v", c.total, c.fileErr)
	}
	return fmt.Sprintf("%s\n\n... [%d bytes cut from the middle; %s] ...\n\n%s", head, cut, where, tl)
}

// trimToLine cuts a head back to its last newline (or a tail forward past
// its first) when that loses little, and never leaves half a UTF-8 rune.
func trimToLine(s string, head bool) string {
	if head {
		if i := strings.LastIndexByte(s, '\n'); i >= len(s)*4/5 {
			s = s[:i+1]
		}
		for len(s) > 0 && !utf8.ValidString(s[len(s)-min(len(s), 3):]) {
			s = s[:len(s)-1]
		}
		return s
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 && i <= len(s)/5 {
		s = s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}
