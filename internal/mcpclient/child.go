package mcpclient

import (
	"context"
	"fmt"
	"os"

	"github.com/broodhq/brood/internal/dispatch"
)

// ForChild starts (or reaches) the MCP servers of a child's envelope, with
// the child's environment and in its workspace dir: a stdio server is the
// child's own child, inside its sandbox, started by the launcher of its
// tool processes (sandbox.StartCommandWith: without network under
// `network: none`, without unix sockets as its Bash), and stops with it.
// What could not be had is said on stderr (the task's stderr.log). Only
// brood links it (childrun.ChildConfig.ConnectMCP): the parent runs brood
// for a child whose envelope names servers.
func ForChild(ctx context.Context, env *dispatch.Envelope, dir string) *Session {
	s := Connect(ctx, env.MCP, Options{
		Dir: dir, Env: os.Environ(), Getenv: os.Getenv, Stderr: os.Stderr, ReadOnly: env.ReadOnly,
		NoNetwork:     env.Network != nil && !*env.Network, // as its Bash commands (tool.Env.NoNetwork)
		NoUnixSockets: !env.UnixSockets,                    // and tool.Env.NoUnixSockets
	})
	for _, n := range s.Notes {
		fmt.Fprintln(os.Stderr, "brood:", n)
	}
	return s
}
