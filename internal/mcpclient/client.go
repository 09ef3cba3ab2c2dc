package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/tool"
)

// Options is how a child starts and reaches its servers.
type Options struct {
	// Dir is where stdio servers start (the child's workspace).
	Dir string
	// Env is the base environment of stdio servers (the child's own); the
	// spec's env is added to it. Getenv expands ${VAR} references.
	Env    []string
	Getenv func(string) string
	// Stderr receives the servers' stderr (the child's stderr log).
	Stderr io.Writer
	// ReadOnly keeps only the tools a server marks readOnlyHint: the child
	// is a read-only agent.
	ReadOnly bool
	// Timeout bounds starting one server and listing its tools (default 30s).
	Timeout time.Duration
	// Version is brood's, sent as the client's version.
	Version string
	// NoNetwork starts stdio servers without network (the child's
	// definition says `network: none`), as its Bash commands are.
	NoNetwork bool
}

// Session is a child's connections to its servers.
type Session struct {
	tools    []tool.Tool
	sessions []*conn
	// Notes say what was left out and why (a server that failed to start,
	// tools withheld from a read-only agent), one line each.
	Notes []string
}

// Connect starts or reaches every server (all at once) and lists its
// tools. A server that fails is left out with a note rather than failing
// the child: the model sees which tools it has. Close stops them all.
func Connect(ctx context.Context, servers []mcpspec.Server, o Options) *Session {
	parts := make([]*Session, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Go(func() {
			p := &Session{}
			if err := p.connect(ctx, srv, o); err != nil {
				p.Notes = append(p.Notes, fmt.Sprintf("MCP server %s: %v; its tools are not available", srv.Name, err))
			}
			parts[i] = p
		})
	}
	wg.Wait()
	s := &Session{}
	for _, p := range parts {
		s.tools = append(s.tools, p.tools...)
		s.sessions = append(s.sessions, p.sessions...)
		s.Notes = append(s.Notes, p.Notes...)
	}
	return s
}

// Tools are the servers' tools as brood tools, in server order.
func (s *Session) Tools() []tool.Tool { return s.tools }

// Close stops the stdio servers (stdin closed, then SIGTERM, then SIGKILL)
// and ends the HTTP sessions.
func (s *Session) Close() error {
	var errs []error
	for _, c := range s.sessions {
		errs = append(errs, c.w.close())
		c.fail(errClosed)
	}
	return errors.Join(errs...)
}

func (s *Session) connect(ctx context.Context, srv mcpspec.Server, o Options) error {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	spec, err := srv.Spec.Expand(getenv)
	if err != nil {
		return err
	}
	if err := spec.Check(); err != nil {
		return err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	start, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dial(start, spec, o)
	if err != nil {
		return err
	}
	listed, err := c.open(start, o.Version)
	if err != nil {
		c.w.close()
		return err
	}
	s.sessions = append(s.sessions, c)
	for _, t := range listed {
		if !wanted(srv, t.Name) {
			continue
		}
		ro := t.Annotations != nil && t.Annotations.ReadOnlyHint
		if o.ReadOnly && !ro {
			s.Notes = append(s.Notes, fmt.Sprintf("%s withheld: this agent is read-only and server %s does not mark the tool readOnlyHint", mcpspec.ToolName(srv.Name, t.Name), srv.Name))
			continue
		}
		s.tools = append(s.tools, newTool(srv.Name, t, c))
	}
	return nil
}

func wanted(srv mcpspec.Server, name string) bool {
	if slices.Contains(srv.Without, name) || slices.Contains(srv.Without, mcpspec.Normalize(name)) {
		return false
	}
	return srv.Tools == nil || slices.Contains(srv.Tools, name) || slices.Contains(srv.Tools, mcpspec.Normalize(name))
}

// dial starts or reaches the server: its wire, not yet initialised.
func dial(ctx context.Context, spec mcpspec.Spec, o Options) (*conn, error) {
	c := newConn()
	switch spec.Kind() {
	case "stdio":
		cmd := exec.Command(spec.Command, spec.Args...)
		cmd.Dir = o.Dir
		cmd.Env = append([]string(nil), o.Env...)
		for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
			cmd.Env = append(cmd.Env, k+"="+spec.Env[k])
		}
		cmd.Stderr = o.Stderr
		w, err := startCommand(cmd, o.NoNetwork, 2*time.Second, c)
		if err != nil {
			return nil, fmt.Errorf("cannot connect: %w", err)
		}
		c.w = w
	case "http":
		c.w = newStreamable(spec.URL, spec.Headers, c)
	case "sse":
		w, err := connectSSE(ctx, spec.URL, spec.Headers, c)
		if err != nil {
			return nil, fmt.Errorf("cannot connect: %w", err)
		}
		c.w = w
	default:
		return nil, fmt.Errorf("unknown type %q", spec.Type)
	}
	return c, nil
}
