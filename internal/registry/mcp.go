package registry

import (
	"sort"
	"strings"

	"github.com/broodhq/brood/internal/mcpspec"
)

// MCPServer is one entry of a definition's mcpServers (Claude Code's key): a
// server configured elsewhere (.mcp.json, ~/.claude.json), named, or one
// defined inline, with its Spec.
type MCPServer struct {
	Name string        `json:"name"`
	Spec *mcpspec.Spec `json:"spec,omitempty"`
}

// MCPTools are the mcp__server__tool entries of the definition's tools.
func (d *Definition) MCPTools() []string {
	var out []string
	for _, t := range d.Tools {
		if isMCPTool(t) {
			out = append(out, t)
		}
	}
	return out
}

func isMCPTool(name string) bool { return strings.HasPrefix(strings.ToLower(name), "mcp__") }

// mcpServers reads mcpServers: a list of names and {name: spec} mappings,
// a mapping of names to specs, or a comma string of names.
func (p *parsing) mcpServers(d *Definition, f *field) {
	add := func(name string, spec any, inline bool) {
		name = strings.TrimSpace(name)
		if name == "" || mcpspec.Normalize(name) != name || strings.Contains(name, "__") {
			p.warn(f.line, "mcpServers: %q is not a server name (letters, digits, - and _); ignored", name)
			return
		}
		for _, s := range d.MCPServers {
			if s.Name == name {
				p.warn(f.line, "mcpServers: %s is named twice; the first is used", name)
				return
			}
		}
		if !inline {
			d.MCPServers = append(d.MCPServers, MCPServer{Name: name})
			return
		}
		s, err := mcpspec.ParseSpec(spec)
		if err != nil {
			p.warn(f.line, "mcpServers: %s: %v; ignored", name, err)
			return
		}
		d.MCPServers = append(d.MCPServers, MCPServer{Name: name, Spec: &s})
	}
	addMap := func(m map[string]any) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(k, m[k], true)
		}
	}
	switch v := f.value.(type) {
	case nil:
	case string:
		for _, n := range splitTools(v) {
			add(n, nil, false)
		}
	case map[string]any:
		addMap(v)
	case []any:
		for _, e := range v {
			switch e := e.(type) {
			case string:
				add(e, nil, false)
			case map[string]any:
				addMap(e)
			default:
				p.warn(f.line, "mcpServers: an entry is neither a server name nor {name: spec}; ignored")
			}
		}
	default:
		p.warn(f.line, "mcpServers must be a list of server names and {name: spec} entries; ignored")
	}
}

// checkMCP warns about a definition that names servers in mcpServers but
// lists tools without any of theirs: it gets exactly the tools it lists.
func (p *parsing) checkMCP(d *Definition, line int) {
	if d.AllTools {
		return
	}
	for _, s := range d.MCPServers {
		used := false
		for _, t := range d.MCPTools() {
			if server, _, _ := strings.Cut(strings.TrimPrefix(t, "mcp__"), "__"); server == s.Name {
				used = true
			}
		}
		if !used {
			p.warn(line, "mcpServers names %s but tools lists none of its tools, so it gets none; add mcp__%s__* (or the tools by name) to tools", s.Name, s.Name)
		}
	}
}

// mcpLine is the line of mcpServers, for warnings about it.
func mcpLine(fields []field) int {
	for _, f := range fields {
		if fieldKey(f.key) == "mcpservers" {
			return f.line
		}
	}
	return 2
}
