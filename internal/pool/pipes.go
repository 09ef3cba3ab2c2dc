package pool

import (
	"io"
	"os"
	"os/exec"
	"time"
)

// tailSize is how much of a child's stderr output.json keeps.
const tailSize = 8 << 10

// pipes are a child's standard streams as the parent holds them. The parent
// owns both ends of every pipe it reads: once the child's leader has exited
// it closes its read ends, so a process that inherited the write end (a
// grandchild that left the session) cannot keep the parent waiting.
type pipes struct {
	stdout     *os.File // the parent's read end of the child's stdout
	stdoutW    *os.File // the child's end, closed in the parent once it started
	stdin      io.WriteCloser
	stderrFile *os.File // stderr, when it is a file: the tail is read back from it
	stderrR    *os.File // otherwise the parent's read end of a pipe ...
	stderrW    *os.File
	copied     chan struct{} // ... copied into errTail until this closes
	errTail    *tail
}

func newPipes(cmd *exec.Cmd) (*pipes, error) {
	sp := &pipes{errTail: newTail(tailSize)}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	sp.stdout, sp.stdoutW = r, w
	cmd.Stdout = w
	// The child watches its stdin: when this end closes (the parent exited
	// or gave up on it), it winds down and records why.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		sp.close()
		return nil, err
	}
	sp.stdin = stdin
	if f, ok := cmd.Stderr.(*os.File); ok {
		sp.stderrFile = f
		return sp, nil
	}
	er, ew, err := os.Pipe()
	if err != nil {
		sp.close()
		return nil, err
	}
	sp.stderrR, sp.stderrW, sp.copied = er, ew, make(chan struct{})
	dst := io.Writer(sp.errTail)
	if cmd.Stderr != nil {
		dst = io.MultiWriter(cmd.Stderr, sp.errTail)
	}
	cmd.Stderr = ew
	go func() {
		defer close(sp.copied)
		// Most children say nothing on stderr: a small buffer (io.Copy
		// would take 32 KiB, er's WriteTo too), hidden from WriteTo.
		_, _ = io.CopyBuffer(dst, struct{ io.Reader }{er}, make([]byte, 4<<10))
	}()
	return sp, nil
}

// started closes the parent's copies of the child's ends.
func (sp *pipes) started() {
	sp.stdoutW.Close()
	if sp.stderrW != nil {
		sp.stderrW.Close()
	}
}

// finish runs once the child's leader has exited and its containment has
// been torn down: it gives the readers the grace period to reach EOF, then
// closes the read ends, which ends them whoever still holds a write end.
func (sp *pipes) finish(readDone <-chan struct{}, grace time.Duration) {
	sp.stdin.Close()
	expired := make(chan struct{})
	t := time.AfterFunc(grace, func() { close(expired) })
	defer t.Stop()
	select {
	case <-readDone:
	case <-expired:
	}
	sp.stdout.Close()
	<-readDone
	if sp.copied != nil {
		select {
		case <-sp.copied:
		case <-expired:
		}
		sp.stderrR.Close()
		<-sp.copied
	}
}

// close releases everything after a failed start.
func (sp *pipes) close() {
	for _, f := range []*os.File{sp.stdout, sp.stdoutW, sp.stderrR, sp.stderrW} {
		if f != nil {
			f.Close()
		}
	}
	if sp.stdin != nil {
		sp.stdin.Close()
	}
}

// tail is the last tailSize bytes of the child's stderr.
func (sp *pipes) tail() string {
	if sp.stderrFile == nil {
		return sp.errTail.String()
	}
	st, err := sp.stderrFile.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	off := max(st.Size()-tailSize, 0)
	b := make([]byte, st.Size()-off)
	n, _ := sp.stderrFile.ReadAt(b, off)
	return string(b[:n])
}

// discard closes the parent's ends of an idle warm child that has exited.
func (sp *pipes) discard() {
	sp.stdout.Close()
	if sp.copied != nil {
		sp.stderrR.Close()
		<-sp.copied
	}
}
