package spawn

import (
	"fmt"
	"maps"
	"slices"

	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/registry"
)

// childMCP resolves the MCP servers a child gets, as Claude Code has it. A
// definition without tools inherits every server this process's agent has
// (Config.MCP), plus those its mcpServers names; one with tools gets exactly
// the mcp__server__tool entries it lists (mcp__server__* for all of one
// server's tools), from the servers its mcpServers defines or names, or this
// process's. disallowedTools withholds tools or whole servers. Each child
// starts its own servers, so one named only in a definition runs for that
// child alone. The notes say what was left out.
func (d *Dispatcher) childMCP(def *registry.Definition) ([]mcpspec.Server, []string) {
	specs := maps.Clone(d.cfg.MCP)
	if specs == nil {
		specs = map[string]mcpspec.Spec{}
	}
	var notes, own []string
	for _, s := range def.MCPServers {
		switch {
		case s.Spec == nil:
			if _, ok := d.cfg.MCP[s.Name]; !ok {
				notes = append(notes, mcpspec.HeldNote(d.cfg.MCPHeld, s.Name))
				continue
			}
		case def.Source == registry.SourceProject && !d.trusts(def.Path):
			notes = append(notes, fmt.Sprintf("mcpServers: %s is defined in %s, a project file, and is not started until you trust this project (brood trust)", s.Name, def.Path))
			continue
		default:
			specs[s.Name] = *s.Spec
		}
		own = append(own, s.Name)
	}
	all := map[string]bool{}
	some := map[string][]string{}
	var order []string
	give := func(server, tool string) {
		if _, ok := specs[server]; !ok {
			notes = append(notes, fmt.Sprintf("tools: mcp__%s__%s names MCP server %s, which is neither configured nor in mcpServers; left out", server, tool, server))
			return
		}
		if !all[server] && some[server] == nil {
			order = append(order, server)
		}
		if tool == "" || tool == "*" {
			all[server] = true
		} else {
			some[server] = append(some[server], tool)
		}
	}
	if def.AllTools {
		for _, n := range slices.Sorted(maps.Keys(d.cfg.MCP)) {
			give(n, "*")
		}
		for _, n := range own {
			give(n, "*")
		}
	} else {
		for _, t := range def.MCPTools() {
			if server, tool, ok := mcpspec.SplitToolName(t); ok {
				give(server, tool)
			}
		}
	}
	var out []mcpspec.Server
	for _, n := range order {
		srv := mcpspec.Server{Name: n, Spec: specs[n]}
		if !all[n] {
			srv.Tools = slices.Compact(slices.Sorted(slices.Values(some[n])))
		}
		drop := false
		for _, t := range def.DisallowedTools {
			if server, tool, ok := mcpspec.SplitToolName(t); ok && server == n {
				if tool == "" || tool == "*" {
					drop = true
				}
				srv.Without = append(srv.Without, tool)
			}
		}
		if !drop {
			out = append(out, srv)
		}
	}
	return out, notes
}

// withMCPRefs adds to a child's environment allowlist the variables its MCP
// servers' specs reference (${GITHUB_TOKEN}): the servers it was given need
// them, and the child expands them when it starts the servers.
func withMCPRefs(allow []string, servers []mcpspec.Server) []string {
	out := slices.Clone(allow)
	for _, s := range servers {
		for _, v := range s.Spec.Refs() {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}
