package cmdutil

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/broodhq/brood/internal/mcpclient"
	"github.com/broodhq/brood/internal/mcpspec"
)

// MCPServers are the MCP servers configured for this project, as Claude
// Code reads them: the user's (~/.claude.json mcpServers) overridden by the
// project's .mcp.json, which counts only once the project is trusted. They
// are read once; the warnings go to stderr.
func (f *Factory) MCPServers() map[string]mcpspec.Spec {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mcp == nil {
		c := mcpspec.Load(mcpspec.Sources{ProjectRoot: f.ProjectRoot, Home: f.Home, TrustProject: f.TrustsProjectFile})
		for _, w := range c.Warnings {
			if !f.untrustedSaid(w) {
				fmt.Fprintln(f.Err, "brood: mcp:", w)
			}
		}
		f.mcp = &c
	}
	return f.mcp.Servers
}

// AddMCPServers adds servers the user named on the command line (claude
// -p's --mcp-config) to the configured ones, a server of the same name
// replacing the configured one; with strict (--strict-mcp-config) they are
// the only ones. Call it before anything reads MCPServers.
func (f *Factory) AddMCPServers(extra map[string]mcpspec.Spec, strict bool) {
	servers := map[string]mcpspec.Spec{}
	var held map[string]string
	if !strict {
		maps.Copy(servers, f.MCPServers())
		held = f.MCPHeld()
	}
	maps.Copy(servers, extra)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mcp = &mcpspec.Config{Servers: servers, Held: held}
}

// MCPHeld are the configured servers held back until the project is
// trusted (mcpspec.Config.Held).
func (f *Factory) MCPHeld() map[string]string {
	f.MCPServers()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mcp.Held
}

// MCPSession connects the root agent to every configured MCP server, as
// Claude Code's main agent has them (close it when the run ends). What could
// not be had is said on stderr.
func (f *Factory) MCPSession(ctx context.Context, version string) *mcpclient.Session {
	specs := f.MCPServers()
	var servers []mcpspec.Server
	for _, n := range slices.Sorted(maps.Keys(specs)) {
		servers = append(servers, mcpspec.Server{Name: n, Spec: specs[n]})
	}
	s := mcpclient.Connect(ctx, servers, mcpclient.Options{Dir: f.Cwd, Env: f.Environ, Getenv: f.Getenv, Stderr: f.Err, Version: version})
	for _, n := range s.Notes {
		fmt.Fprintln(f.Err, "brood:", n)
	}
	return s
}
