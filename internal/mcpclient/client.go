package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/sandbox"
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
	// NoUnixSockets starts stdio servers without unix sockets, as a
	// child's Bash commands are (sandbox.Walls.NoUnixSockets).
	NoUnixSockets bool
}

// Session is a child's connections to its servers.
type Session struct {
	tools    []tool.Tool
	sessions []*mcp.ClientSession
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
				// The error may quote the expanded spec (a URL's ?key=):
				// it names the ${VAR} instead of the secret.
				msg := srv.Spec.Unexpand(o.getenv(), err.Error())
				p.Notes = append(p.Notes, fmt.Sprintf("MCP server %s: %s; its tools are not available", srv.Name, msg))
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
	for _, cs := range s.sessions {
		errs = append(errs, cs.Close())
	}
	return errors.Join(errs...)
}

// getenv is o.Getenv, or nothing set.
func (o Options) getenv() func(string) string {
	if o.Getenv == nil {
		return func(string) string { return "" }
	}
	return o.Getenv
}

func (s *Session) connect(ctx context.Context, srv mcpspec.Server, o Options) error {
	getenv := o.getenv()
	spec, err := srv.Spec.Expand(getenv)
	if err != nil {
		return err
	}
	if err := spec.Check(); err != nil {
		return err
	}
	transport, err := transportFor(spec, o)
	if err != nil {
		return err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	start, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "brood", Version: o.Version}, nil)
	cs, err := client.Connect(start, transport, nil)
	if err != nil {
		return fmt.Errorf("cannot connect: %w", err)
	}
	var listed []*mcp.Tool
	for t, err := range cs.Tools(start, nil) {
		if err != nil {
			cs.Close()
			return fmt.Errorf("listing tools: %w", err)
		}
		listed = append(listed, t)
	}
	s.sessions = append(s.sessions, cs)
	for _, t := range listed {
		if !wanted(srv, t.Name) {
			continue
		}
		ro := t.Annotations != nil && t.Annotations.ReadOnlyHint
		if o.ReadOnly && !ro {
			s.Notes = append(s.Notes, fmt.Sprintf("%s withheld: this agent is read-only and server %s does not mark the tool readOnlyHint", mcpspec.ToolName(srv.Name, t.Name), srv.Name))
			continue
		}
		st := newTool(srv.Name, t, cs)
		st.unexpand = func(text string) string { return srv.Spec.Unexpand(getenv, text) }
		s.tools = append(s.tools, st)
	}
	return nil
}

func wanted(srv mcpspec.Server, name string) bool {
	if slices.Contains(srv.Without, name) || slices.Contains(srv.Without, mcpspec.Normalize(name)) {
		return false
	}
	return srv.Tools == nil || slices.Contains(srv.Tools, name) || slices.Contains(srv.Tools, mcpspec.Normalize(name))
}

func transportFor(spec mcpspec.Spec, o Options) (mcp.Transport, error) {
	switch spec.Kind() {
	case "stdio":
		cmd := exec.Command(spec.Command, spec.Args...)
		cmd.Dir = o.Dir
		cmd.Env = append([]string(nil), o.Env...)
		for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
			cmd.Env = append(cmd.Env, k+"="+spec.Env[k])
		}
		cmd.Stderr = o.Stderr
		return &commandTransport{cmd: cmd, walls: sandbox.Walls{NoNetwork: o.NoNetwork, NoUnixSockets: o.NoUnixSockets}, terminate: 2 * time.Second}, nil
	case "http":
		return &mcp.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: headerClient(spec.Headers)}, nil
	case "sse":
		return &mcp.SSEClientTransport{Endpoint: spec.URL, HTTPClient: headerClient(spec.Headers)}, nil
	}
	return nil, fmt.Errorf("unknown type %q", spec.Type)
}

// headerClient sends the spec's headers with every request.
func headerClient(h map[string]string) *http.Client {
	if len(h) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{h: h, base: http.DefaultTransport}}
}

type headerTransport struct {
	h    map[string]string
	base http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}
