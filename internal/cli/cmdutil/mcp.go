package cmdutil

import (
	"fmt"

	"github.com/broodhq/brood/internal/mcpspec"
)

// MCPServers are the MCP servers configured for this project, as Claude
// Code reads them: the user's (~/.claude.json mcpServers) overridden by the
// project's .mcp.json, which counts only once the project is trusted. The
// warnings go to stderr.
func (f *Factory) MCPServers() map[string]mcpspec.Spec {
	c := mcpspec.Load(mcpspec.Sources{ProjectRoot: f.ProjectRoot, Home: f.Home, TrustProject: f.TrustsProjectFile})
	for _, w := range c.Warnings {
		fmt.Fprintln(f.Err, "brood: mcp:", w)
	}
	return c.Servers
}

// TrustsProjectFile is the one call MCP support needs from project trust
// (internal/trust, which the trust work is building): whether the user
// trusts this project file (.mcp.json, or an agent definition that defines
// MCP servers inline) to start commands. Until trust lands it is granted
// only by BROOD_TRUST_PROJECT=1 in the environment.
func (f *Factory) TrustsProjectFile(path string) bool {
	return f.Getenv("BROOD_TRUST_PROJECT") == "1"
}
