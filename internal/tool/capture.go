package tool

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/limits"
)

// spillCap is the most one command's spilled output takes on disk: its
// first half and its last half, around a line that says what was dropped.
const spillCap = 8 << 20

// markerRoom is kept in a file's share of the cap for the line that says
// what was dropped.
const markerRoom = 256

// capture collects a command's output within a memory bound. It keeps the
// whole output in memory up to limit bytes; past that it spills into a
// file and remembers only the head and the tail for the inline result,
// since the start shows what ran and the end shows how it finished. The
// file itself is capped the same way: its first half is written as it
// comes, its last half kept in a ring until the command ends, so `yes`
// for an hour leaves at most the cap on disk (and the child's Spills
// bound all its files together).
type capture struct {
	mu      sync.Mutex
	limit   int
	dir     string
	prefix  string // the spill file's name before its random part
	spills  *Spills
	buf     []byte // everything, until the limit is passed
	head    []byte // first limit/2 bytes, once spilled
	tail    []byte // last limit/2 bytes, once spilled
	total   int64
	spilled bool
	file    *os.File
	fileErr error
	// The file's share of the cap (reserved from spills), its head
	// written so far and its tail ring.
	reserved int64
	diskHead int64
	ring     ring
}

func newCapture(limit int, dir string, spills *Spills) *capture {
	return &capture{limit: limit, dir: dir, prefix: "bash-output", spills: spills}
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
	c.toDisk(p)
	c.keep(p)
	return len(p), nil
}

// spill moves the buffered output into a new file under dir; from now on
// only the head and the tail stay in memory.
func (c *capture) spill() {
	c.spilled = true
	c.reserved = c.spills.reserve(spillCap)
	switch {
	case c.reserved < 2*int64(c.limit):
		c.spills.settle(c.reserved, 0, "")
		c.reserved = 0
		c.fileErr = fmt.Errorf("the output limit (%s of spilled output on disk) is used up by earlier commands", c.spills)
	default:
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			c.fileErr = err
		} else if f, err := os.CreateTemp(c.dir, c.prefix+"-*.txt"); err != nil {
			c.fileErr = err
		} else {
			c.file = f
			// The line that says what was dropped fits in the reservation.
			c.ring = newRing(int(c.reserved - c.reserved/2 - markerRoom))
		}
		if c.file == nil {
			c.spills.settle(c.reserved, 0, "")
			c.reserved = 0
		}
	}
	c.toDisk(c.buf)
	c.keep(c.buf)
	c.buf = nil
}

// toDisk writes p to the file's head while it has room, the rest into the
// tail ring.
func (c *capture) toDisk(p []byte) {
	if c.file == nil {
		return
	}
	if room := c.reserved/2 - c.diskHead; room > 0 {
		n := int(min(room, int64(len(p))))
		if _, err := c.file.Write(p[:n]); err != nil {
			c.fileErr = err
			c.dropFile()
			return
		}
		c.diskHead += int64(n)
		p = p[n:]
	}
	c.ring.write(p)
}

// dropFile gives up the file after a write error.
func (c *capture) dropFile() {
	name := c.file.Name()
	c.file.Close()
	c.file = nil
	_ = os.Remove(name)
	c.spills.settle(c.reserved, 0, "")
	c.reserved = 0
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
// rest is.
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
	switch name, dropped, err := c.closeFile(); {
	case err != nil:
		where = fmt.Sprintf("the whole output (%d bytes) could not be saved: %v", c.total, err)
	case dropped > 0:
		where = fmt.Sprintf("the output was %d bytes; its first %d and last %d bytes are in %s (the %d between were dropped: a command's saved output is capped at %s); Read it with offset/limit or Grep it",
			c.total, c.diskHead, c.total-c.diskHead-dropped, name, dropped, limits.Size(spillCap))
	default:
		where = fmt.Sprintf("the whole output (%d bytes) is in %s; Read it with offset/limit or Grep it", c.total, name)
	}
	return fmt.Sprintf("%s\n\n... [%d bytes cut from the middle; %s] ...\n\n%s", head, cut, where, tl)
}

// closeFile writes the tail ring after the head (with a line saying what
// was dropped between them), closes the file and settles its size with
// the child's spills.
func (c *capture) closeFile() (name string, dropped int64, err error) {
	if c.file == nil {
		if c.fileErr == nil {
			c.fileErr = fmt.Errorf("no file was made")
		}
		return "", 0, c.fileErr
	}
	name = c.file.Name()
	dropped = c.total - c.diskHead - int64(c.ring.len())
	if dropped > 0 {
		_, err = fmt.Fprintf(c.file, "\n\n[brood: %d bytes dropped here: a command's saved output is capped at %s, its first and last halves]\n\n", dropped, limits.Size(spillCap))
	}
	for _, part := range c.ring.parts() {
		if err == nil {
			_, err = c.file.Write(part)
		}
	}
	size := int64(0)
	if info, serr := c.file.Stat(); serr == nil {
		size = info.Size()
	}
	if cerr := c.file.Close(); err == nil {
		err = cerr
	}
	c.file = nil
	c.spills.settle(c.reserved, size, name)
	c.reserved = 0
	return name, dropped, err
}

// ring keeps the last len(buf) bytes written to it.
type ring struct {
	buf  []byte
	pos  int
	full bool
}

func newRing(n int) ring { return ring{buf: make([]byte, n)} }

func (r *ring) write(p []byte) {
	if len(r.buf) == 0 {
		return
	}
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.pos, r.full = 0, true
		return
	}
	n := copy(r.buf[r.pos:], p)
	if n < len(p) {
		copy(r.buf, p[n:])
		r.full = true
	}
	r.pos = (r.pos + len(p)) % len(r.buf)
	if r.pos == 0 && len(p) > 0 {
		r.full = true
	}
}

func (r *ring) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.pos
}

// parts are the kept bytes, oldest first.
func (r *ring) parts() [][]byte {
	if !r.full {
		return [][]byte{r.buf[:r.pos]}
	}
	return [][]byte{r.buf[r.pos:], r.buf[:r.pos]}
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

// Output is what a tool other than Bash (an MCP server's call) gives the
// model of a whole text it got: redacted by the agent's redactor, kept
// inline up to the output limit, the rest in a file under the output
// directory named after the tool, within the agent's Spills (removed when
// the run ends) and capped as a command's is — a server's reply is as
// untrusted and as unbounded as a command's output.
func (e *Env) Output(name, text string) string {
	out := newCapture(e.outputLimit(), e.outputDir(), e.Spills)
	out.prefix = spillPrefix(name)
	redactor := e.Redactor
	if redactor == nil {
		environ := e.Environ
		if environ == nil {
			environ = os.Environ()
		}
		redactor = NewRedactor(environ)
	}
	w := redactor.Writer(out)
	_, _ = io.WriteString(w, text)
	w.Close()
	return out.finish()
}

// spillPrefix keeps a tool's name to characters safe in a file name.
func spillPrefix(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b) + "-output"
}
