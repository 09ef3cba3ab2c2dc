// Package mcpspec is MCP servers as Claude Code configures them: the spec
// of one server (stdio command or HTTP url), .mcp.json and ~/.claude.json,
// ${VAR} expansion, and the mcp__server__tool names the model sees. It has
// no dependencies, so records (the dispatch envelope) and the registry can
// carry specs; package mcpclient starts and talks to the servers.
package mcpspec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Spec is one MCP server as Claude Code writes it. String fields may hold
// ${VAR} and ${VAR:-default} references, expanded when the server starts
// (in the child, from its environment), so no secret is written to a task's
// records.
type Spec struct {
	Type    string            `json:"type,omitempty"` // stdio (the default with a command), http or sse
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Kind is the transport the spec uses: stdio, http or sse.
func (s Spec) Kind() string {
	switch t := strings.ToLower(s.Type); {
	case t == "streamable-http" || t == "streamablehttp":
		return "http"
	case t != "":
		return t
	case s.Command == "" && s.URL != "":
		return "http"
	}
	return "stdio"
}

// Check reports what makes the spec unusable, naming the field.
func (s Spec) Check() error {
	switch s.Kind() {
	case "stdio":
		if strings.TrimSpace(s.Command) == "" {
			return fmt.Errorf("a stdio server needs a command")
		}
	case "http", "sse":
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") && !strings.HasPrefix(s.URL, "${") {
			return fmt.Errorf("type %s needs a url starting with http:// or https://", s.Kind())
		}
	default:
		return fmt.Errorf("type %q is not stdio, http or sse", s.Type)
	}
	return nil
}

// Server is one server a child gets: its name, its spec as configured, and
// which of its tools the child may call.
type Server struct {
	Name string `json:"name"`
	Spec Spec   `json:"spec"`
	// Tools are the server's tools the child gets, as the server names them;
	// nil means all of them.
	Tools []string `json:"tools,omitempty"`
	// Without are tools withheld whatever Tools says (disallowedTools).
	Without []string `json:"without,omitempty"`
}

// ParseSpec reads one inline server spec (a JSON or YAML-decoded value).
func ParseSpec(v any) (Spec, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Spec{}, err
	}
	var s Spec
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("not a server spec (type, command, args, env, url, headers): %v", err)
	}
	return s, s.Check()
}

// ParseFile reads a file in .mcp.json's shape: {"mcpServers": {name: spec}}.
// A server that can't be used is left out with a warning naming it.
func ParseFile(path string, data []byte) (map[string]Spec, []string, error) {
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: not valid JSON: %v", path, err)
	}
	out := map[string]Spec{}
	var warns []string
	for _, name := range sortedKeys(f.MCPServers) {
		var s Spec
		err := json.Unmarshal(f.MCPServers[name], &s)
		if err == nil {
			err = s.Check()
		}
		if err == nil && !validName(name) {
			err = fmt.Errorf("the name must be letters, digits, - and _")
		}
		if err != nil {
			warns = append(warns, fmt.Sprintf("%s: mcpServers.%s: %v; server ignored", path, name, err))
			continue
		}
		out[name] = s
	}
	return out, warns, nil
}

// Sources says where configured servers live.
type Sources struct {
	ProjectRoot string
	Home        string
	// TrustProject reports whether the user trusts the project file at
	// path (.mcp.json): a cloned repository must not start commands of its
	// choosing.
	TrustProject func(path string) bool
}

// Config is the servers configured for this project: the user's
// (~/.claude.json mcpServers) overridden by the project's .mcp.json, as
// Claude Code has it.
type Config struct {
	Servers  map[string]Spec
	Warnings []string
	// Held are the servers of a project .mcp.json held back until the
	// user trusts the project, by name: the file that configures them.
	// They are configured, not started.
	Held map[string]string
}

// Load reads the configured servers. Files that don't exist are skipped;
// every problem is a warning, never a lost server elsewhere.
func Load(src Sources) Config {
	c := Config{Servers: map[string]Spec{}}
	if src.Home != "" {
		c.merge(filepath.Join(src.Home, ".claude.json"))
	}
	if src.ProjectRoot != "" {
		p := filepath.Join(src.ProjectRoot, ".mcp.json")
		if _, err := os.Stat(p); err == nil {
			if src.TrustProject == nil || !src.TrustProject(p) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: its MCP servers are not used until you trust this project (brood trust)", p))
				c.hold(p)
			} else {
				c.merge(p)
			}
		}
	}
	return c
}

// hold records the server names of an untrusted file (read, never used).
func (c *Config) hold(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	servers, _, err := ParseFile(path, data)
	if err != nil {
		return
	}
	for n := range servers {
		if _, ok := c.Servers[n]; ok {
			continue // the user's own server of that name is used
		}
		if c.Held == nil {
			c.Held = map[string]string{}
		}
		c.Held[n] = path
	}
}

// HeldNote says why a server an agent names is not there: held back with
// an untrusted project (and how to trust it), or not configured at all.
func HeldNote(held map[string]string, name string) string {
	if path, ok := held[name]; ok {
		return fmt.Sprintf("mcpServers: %s is configured in %s, a project file, and held back until you trust this project (brood trust, or --trust-project for one run); left out", name, path)
	}
	return fmt.Sprintf("mcpServers: %s is not a configured MCP server (.mcp.json, ~/.claude.json); left out", name)
}

func (c *Config) merge(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %v", path, err))
		}
		return
	}
	servers, warns, err := ParseFile(path, data)
	if err != nil {
		c.Warnings = append(c.Warnings, err.Error())
		return
	}
	c.Warnings = append(c.Warnings, warns...)
	for n, s := range servers {
		c.Servers[n] = s
	}
}

// ToolName is the name the model sees for a server's tool, as Claude Code
// spells it: mcp__<server>__<tool>, other characters than letters, digits,
// - and _ replaced by _.
func ToolName(server, tool string) string {
	return "mcp__" + Normalize(server) + "__" + Normalize(tool)
}

// SplitToolName splits mcp__server__tool; tool is "" for mcp__server and
// "*" for mcp__server__*.
func SplitToolName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok || rest == "" {
		return "", "", false
	}
	server, tool, _ = strings.Cut(rest, "__")
	return server, tool, server != ""
}

// Normalize replaces what Claude Code replaces in a tool name part: every
// character but letters, digits, - and _ becomes _.
func Normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

func validName(s string) bool { return s != "" && Normalize(s) == s && !strings.Contains(s, "__") }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
