package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/sandbox"
)

// commandTransport runs a stdio server as a child's tool process: started
// by sandbox.StartCommand (the launcher its Bash commands go through: no
// introspection, no network under `network: none`, no unix sockets as
// its Bash has none, a process group of its
// own that dies with it), then spoken to over its stdin and stdout.
type commandTransport struct {
	cmd       *exec.Cmd
	walls     sandbox.Walls
	terminate time.Duration
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	c, err := t.start()
	if err != nil {
		return nil, err
	}
	w := &serverInput{WriteCloser: stdin, c: c, terminate: t.terminate}
	return (&mcp.IOTransport{Reader: io.NopCloser(stdout), Writer: w}).Connect(ctx)
}

// start starts the server's process behind t's walls.
func (t *commandTransport) start() (*sandbox.Command, error) {
	c, err := sandbox.StartCommandWith(t.cmd, t.walls)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", t.cmd.Path, err)
	}
	return c, nil
}

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
