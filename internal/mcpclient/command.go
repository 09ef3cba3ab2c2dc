package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/sandbox"
)

// commandWire runs a stdio server as a child's tool process: started by
// sandbox.StartCommand (the launcher its Bash commands go through: no
// introspection, no network under `network: none`, a process group of its
// own that dies with it), then spoken to over its stdin and stdout, one
// JSON-RPC message a line (MCP's stdio transport).
type commandWire struct {
	mu sync.Mutex // one message at a time on stdin
	in *serverInput
}

func startCommand(cmd *exec.Cmd, noNetwork bool, terminate time.Duration, c *conn) (*commandWire, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	sc, err := sandbox.StartCommand(cmd, noNetwork)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go readLines(stdout, c)
	return &commandWire{in: &serverInput{WriteCloser: stdin, c: sc, terminate: terminate}}, nil
}

// readLines delivers the server's stdout line by line until it ends.
func readLines(r io.Reader, c *conn) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxMessage {
			c.fail(fmt.Errorf("the MCP server wrote a line of more than %d bytes", maxMessage))
			_, _ = io.Copy(io.Discard, br) // keep the server from blocking on a full pipe
			return
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if l := bytes.TrimSpace(line); len(l) > 0 {
			c.deliver(l)
		}
		line = line[:0]
		if err != nil {
			c.fail(errClosed)
			return
		}
	}
}

func (w *commandWire) send(_ context.Context, msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.in.Write(append(msg, '\n'))
	return err
}

func (w *commandWire) close() error { return w.in.Close() }

// serverInput is a stdio server's stdin; closing it ends the server as
// the MCP spec has it: stdin closed, then SIGTERM, then SIGKILL, to its
// whole process group.
type serverInput struct {
	io.WriteCloser
	c         *sandbox.Command
	terminate time.Duration
}

func (s *serverInput) Close() error {
	err := s.WriteCloser.Close()
	pid := s.c.Cmd.Process.Pid
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			_ = syscall.Kill(-pid, sig)
		}
		select {
		case <-s.c.Done():
			return errors.Join(err, ignoreExit(s.c.Wait()))
		case <-time.After(s.terminate):
		}
	}
	return errors.Join(err, errors.New("unresponsive MCP server"))
}

// ignoreExit drops the exit status of a server that was told to stop.
func ignoreExit(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return err
}
