// Package mcp is the `brood mcp` command: brood's delegation served to
// other agents (Claude Code, Codex, Cursor, ...) over the Model Context
// Protocol, on stdio or on streamable HTTP bound to a loopback address.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/mcpserver"
)

// Options are the flags of `brood mcp`.
type Options struct {
	Factory *cmdutil.Factory
	// Version is brood's, reported to clients.
	Version string
	// HTTP is the loopback address to serve streamable HTTP on; empty
	// serves stdio.
	HTTP string
}

// NewCmdMCP builds `brood mcp`. runF replaces mcpRun in tests.
func NewCmdMCP(f *cmdutil.Factory, version string, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f, Version: version}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve brood's delegation (Task, TaskOutput, ...) to other agents over MCP",
		Long: `Serve brood's subagents to any MCP client: Claude Code, Codex, Cursor.
The client's agent gets the tools Task, TaskOutput, SendMessage, TaskStop and
ListAgents, and the resources brood://tasks, brood://tasks/{id} and
brood://agents. Children run in this project with its agents, settings and
permissions; a child's permission asks are denied (no one is on the loop).

By default brood mcp speaks MCP on stdin/stdout (the client starts it). With
--http it serves streamable HTTP on a loopback address at /mcp.`,
		Example: `  claude mcp add brood -- brood mcp
  brood mcp --http 127.0.0.1:7345`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT; port 0 picks one) instead of stdio")
	return cmd
}

func mcpRun(ctx context.Context, opts *Options) error {
	var ln net.Listener
	if opts.HTTP != "" {
		var err error
		if ln, err = listenLoopback(opts.HTTP); err != nil {
			return err
		}
		defer ln.Close()
	}
	srv, stop, err := newServer(ctx, opts.Factory, opts.Version)
	if err != nil {
		return err
	}
	defer stop()
	if ln == nil {
		return srv.ServeStdio(ctx)
	}
	return serveHTTP(ctx, srv, ln, opts.Factory.Err)
}

// listenLoopback listens on addr, which must be a loopback address: brood
// mcp runs code on request and has no authentication of its own.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: want HOST:PORT, e.g. 127.0.0.1:7345", addr)
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--http %s: brood mcp serves only a loopback address (127.0.0.1, [::1] or localhost): anyone who reaches it can run subagents in this project", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: %w", addr, err)
	}
	return ln, nil
}

func serveHTTP(ctx context.Context, srv *mcpserver.Server, ln net.Listener, stderr io.Writer) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if stderr != nil {
		fmt.Fprintf(stderr, "brood mcp: serving streamable HTTP on http://%s/mcp\n", ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); errors.Is(err, context.DeadlineExceeded) {
		return hs.Close() // streams a client still holds open
	} else if err != nil {
		return err
	}
	return nil
}
