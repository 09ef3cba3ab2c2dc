package delegate

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/mcpclient"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/tool"
)

// connectMCP starts (or reaches) the child's MCP servers, with the child's
// environment and in its workspace: a stdio server is the child's own child,
// inside its sandbox, started by the launcher of its tool processes
// (sandbox.StartCommand: without network under `network: none`), and stops
// with it. What could
// not be had is said on stderr (the task's stderr.log).
func connectMCP(ctx context.Context, env *dispatch.Envelope, dir string) *mcpclient.Session {
	s := mcpclient.Connect(ctx, env.MCP, mcpclient.Options{
		Dir: dir, Env: os.Environ(), Getenv: os.Getenv, Stderr: os.Stderr, ReadOnly: env.ReadOnly,
		NoNetwork: env.Network != nil && !*env.Network, // as its Bash commands (tool.Env.NoNetwork)
	})
	for _, n := range s.Notes {
		fmt.Fprintln(os.Stderr, "brood:", n)
	}
	return s
}

// mcpSpecs are a child's servers by name: what its own children inherit.
func mcpSpecs(servers []mcpspec.Server) map[string]mcpspec.Spec {
	out := map[string]mcpspec.Spec{}
	for _, s := range servers {
		out[s.Name] = s.Spec
	}
	return out
}

func toolsOf(s *tool.Set) []tool.Tool {
	var out []tool.Tool
	for _, n := range s.Names() {
		t, _ := s.Get(n)
		out = append(out, t)
	}
	return out
}

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
