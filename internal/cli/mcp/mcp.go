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
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/isolate"
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
	// TokenFile holds the bearer token HTTP clients must send (read when
	// it exists, else generated and written there, 0600).
	TokenFile string
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
--http it serves streamable HTTP on a loopback address at /mcp, to clients
that send its token (Authorization: Bearer TOKEN; anything else gets 401).
The token is BROOD_MCP_TOKEN when set, else the content of --token-file when
that file exists (it must be mode 600), else a new random one, written 0600
to --token-file or, for this start only, to
~/.config/brood/mcp/http-PORT.token (the path is printed on stderr).`,
		Example: `  claude mcp add brood -- brood mcp
  brood mcp --http 127.0.0.1:7345 --token-file ~/.config/brood/mcp/http.token
  claude mcp add --transport http brood http://127.0.0.1:7345/mcp \
    --header "Authorization: Bearer $(cat ~/.config/brood/mcp/http.token)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.TokenFile != "" && opts.HTTP == "" {
				return cmdutil.UsageError("--token-file goes with --http: brood mcp on stdio needs no token (the client starts it)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT; port 0 picks one) instead of stdio")
	cmd.Flags().StringVar(&opts.TokenFile, "token-file", "", "with --http: the file holding the bearer token clients send (written 0600 with a new token when missing)")
	return cmd
}

func mcpRun(ctx context.Context, opts *Options) error {
	f := opts.Factory
	var ln net.Listener
	var tok token
	if opts.HTTP != "" {
		var err error
		if ln, err = listenLoopback(opts.HTTP); err != nil {
			return err
		}
		defer ln.Close()
		if tok, err = httpToken(f.Getenv, opts.TokenFile, f.Home, ln.Addr()); err != nil {
			return err
		}
		if tok.temp {
			defer os.Remove(tok.file)
		}
	}
	// No child reads the token, wherever --token-file put it: the
	// default place, ~/.config/brood/mcp, is hidden from every child of
	// every brood of this user, and a file elsewhere is listed there to
	// be hidden the same way (isolate.RegisterTokenFile).
	var hidden []string
	if tok.file != "" {
		if err := isolate.RegisterTokenFile(tok.file); err != nil {
			return fmt.Errorf("brood mcp --http: %w (subagents could read the token)", err)
		}
		hidden = append(hidden, tok.file)
	}
	srv, stop, err := newServer(ctx, f, opts.Version, hidden...)
	if err != nil {
		return err
	}
	defer stop()
	if ln == nil {
		return srv.ServeStdio(ctx)
	}
	return serveHTTP(ctx, srv, ln, tok, f.Err)
}

// listenLoopback listens on addr, which must be a loopback address: brood
// mcp runs code on request, and a token is no reason to offer that to the
// network.
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

func serveHTTP(ctx context.Context, srv *mcpserver.Server, ln net.Listener, tok token, stderr io.Writer) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserver.RequireToken(srv.Handler(), tok.value))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if stderr != nil {
		fmt.Fprintf(stderr, "brood mcp: serving streamable HTTP on http://%s/mcp\n", ln.Addr())
		where := "the token is " + EnvToken
		if tok.file != "" {
			where = "the token is in " + tok.file
		}
		fmt.Fprintf(stderr, "brood mcp: clients must send Authorization: Bearer TOKEN; %s\n", where)
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
