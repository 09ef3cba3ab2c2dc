// Package registry loads agent definitions: Markdown files whose YAML
// frontmatter says what a subagent is (name, description, tools, model,
// limits) and whose body is its system prompt. Definitions come from three
// places with a fixed precedence, project over user over built-in, and the
// built-in names can never be shadowed, so a safety-relevant read-only agent
// such as explore is always the one brood ships.
//
// The format is Claude Code's, read with Claude Code's leniency, so that the
// thousands of published agent files work unchanged. Loading never panics
// and never stops at the first bad file: every problem comes back as a
// Diagnostic with file and line, and the rest of a directory still loads.
//
// This package only reads files. It must never import the agent loop, the
// tools, the dispatcher or anything that spawns processes; those consume a
// *Registry.
package registry

import (
	"fmt"
	"github.com/broodhq/brood/internal/limits"
	"sort"
	"strings"
	"time"
)

// Source says which level of the precedence order a definition came from.
type Source string

const (
	SourceBuiltin Source = "built-in"
	SourceUser    Source = "user"
	SourceProject Source = "project"
)

// rank orders the sources for precedence: a higher rank wins.
func (s Source) rank() int {
	switch s {
	case SourceSession:
		return 3
	case SourceProject:
		return 2
	case SourceUser:
		return 1
	}
	return 0
}

// Definition is one agent type after parsing and defaulting. Zero values
// mean "inherit from the parent" wherever that makes sense, so the
// dispatcher can apply a definition on top of its own settings.
type Definition struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Prompt is the body of the file, trimmed. Empty means the child
	// inherits the parent's system prompt unchanged.
	Prompt string `json:"prompt,omitempty"`

	// Path is where the definition was read from; built-ins carry a
	// "<built-in>/" prefix so no one mistakes them for a file on disk.
	Path   string `json:"path"`
	Source Source `json:"source"`

	// AllTools is set when the definition names no tools (or "*"): the
	// child gets every tool its parent has, less DisallowedTools. Otherwise
	// Tools is the allowlist in canonical spelling (Read, Bash, Task, ...);
	// an empty non-nil Tools means no tools at all.
	AllTools bool     `json:"all_tools"`
	Tools    []string `json:"tools"`
	// ToolRules are the permission rules written as tool specifiers, such
	// as "Bash(npm test:*)": the tool is in Tools and the rule narrows it.
	ToolRules []string `json:"tool_rules,omitempty"`
	// DisallowedTools are removed from whatever the child would get;
	// DenyRules are disallowed entries with a specifier, which deny only
	// the matching calls rather than the whole tool.
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	DenyRules       []string `json:"deny_rules,omitempty"`
	// Unresolvable is set when the definition named tools and none of them
	// is one brood provides. Such an agent loads (so it can be listed and
	// checked) but the dispatcher must refuse to spawn it.
	Unresolvable bool `json:"unresolvable,omitempty"`
	// ReadOnly is set when every tool the agent may use is read-only, or
	// when SandboxReadOnly asks for it.
	ReadOnly bool `json:"read_only"`
	// SandboxReadOnly (frontmatter `sandbox: read-only`) makes the agent
	// read-only whatever its tools: its Bash runs under the kernel sandbox,
	// and is withdrawn where the kernel cannot hold it read-only.
	SandboxReadOnly bool `json:"sandbox_read_only,omitempty"`

	// Model is "" to inherit, else as written: an alias (sonnet, opus,
	// haiku), a full model id, or provider/model.
	Model string `json:"model,omitempty"`
	// Effort is "" to inherit, else low, medium, high, xhigh or max.
	Effort string `json:"effort,omitempty"`
	// MaxTurns is 0 for the runtime's default turn cap.
	MaxTurns   int  `json:"max_turns,omitempty"`
	Background bool `json:"background,omitempty"`
	// Delegate lets the agent dispatch subagents itself (below the depth
	// cap). DelegateAllow scopes it to those agent types; nil means any.
	Delegate bool `json:"delegate,omitempty"`
	// Lacking are tools the file names that brood does not provide; the
	// agent runs without them (a notice at dispatch, a line in its prompt).
	Lacking       []string `json:"lacking,omitempty"`
	DelegateAllow []string `json:"delegate_allow,omitempty"`
	// Isolation is "" for the configured default, else "worktree" or "none".
	Isolation string `json:"isolation,omitempty"`
	// Timeout is a hard wall-clock limit for one run; 0 means the default.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Priority orders queued dispatches; HasPriority tells an explicit 0
	// from an absent value.
	Priority    int  `json:"priority,omitempty"`
	HasPriority bool `json:"has_priority,omitempty"`
	// Sections are the report headings the agent's final message must have
	// (frontmatter `sections:`); nil means the built-ins' four.
	Sections []string `json:"sections,omitempty"`
	// PermissionMode is Claude Code's permissionMode key ("" when absent):
	// the mode the agent asks to run in, which the dispatcher grants only
	// within what its parent may do (delegate.childMode).
	PermissionMode string `json:"permission_mode,omitempty"`
	// Network is nil for the default (none for a read-only built-in's
	// tools, on otherwise); false (`network: none`) runs the agent's tool
	// processes (Bash and all it starts) without network, true (`on`)
	// with. The child's own connection to its model is never cut.
	Network *bool `json:"network,omitempty"`
	// Limits are the definition's own resource limits (`limits:`), over
	// the settings' (a project definition may only lower them).
	Limits limits.Set `json:"limits,omitzero"`
	// Env names the secret-looking environment variables (GH_TOKEN, ...)
	// the child may keep (frontmatter `env: [GH_TOKEN]`); every other one
	// is removed from its environment (tool.ChildEnviron).
	Env []string `json:"env,omitempty"`

	// MCPServers are the MCP servers the definition names or defines
	// (Claude Code's mcpServers); its tools name theirs as
	// mcp__server__tool.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`

	// Extra keeps every frontmatter key brood does not interpret (Claude
	// Code's color, skills, hooks, ... and unknown keys), so
	// nothing an author wrote is lost and later issues can read them.
	Extra map[string]any `json:"extra,omitempty"`

	// Overrides lists the lower-precedence definitions of the same name
	// that this one hides, so `brood agents show` can explain itself.
	Overrides []string `json:"overrides,omitempty"`

	// nameLine is where `name:` is, for precedence warnings.
	nameLine  int
	toolsLine int // the tools: line, for warnings about a tool
	modelLine int // the model: line, for where a held model is written
}

// ModelLine is the line of the definition's model: key (0 where it has
// none, or it is not known): what a warning that holds the model back
// names.
func (d *Definition) ModelLine() int { return d.modelLine }

// Severity of a Diagnostic.
const (
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// Diagnostic is one problem found while loading. An error means the file was
// skipped; a warning means it loaded with a default in place of what it said.
type Diagnostic struct {
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// Kind marks the warnings a run repeats when it starts, not only
	// brood agents check: a definition ignored because it would shadow a
	// built-in (KindShadow), a .md file that is no definition at all
	// (KindNoFrontmatter). "" for the others.
	Kind string `json:"kind,omitempty"`
}

// Kinds of Diagnostic a run shows at its start.
const (
	KindShadow        = "shadow"
	KindNoFrontmatter = "no-frontmatter"
)

// AtStart reports whether a run shows the diagnostic when it starts: every
// error (a file left out) and the warnings of a Kind (a definition that is
// silently not the one the user wrote).
func (d Diagnostic) AtStart() bool { return d.Severity == SeverityError || d.Kind != "" }

// String renders the diagnostic the way compilers do, so editors can jump to
// it: "path:line: severity: message".
func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", d.Path, d.Line, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.Path, d.Severity, d.Message)
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Registry is the resolved set of agent definitions, one per name. It is
// immutable once built and safe for concurrent use.
type Registry struct {
	byName map[string]*Definition
	sorted []*Definition
}

func newRegistry(defs map[string]*Definition) *Registry {
	r := &Registry{byName: defs}
	for _, d := range defs {
		r.sorted = append(r.sorted, d)
	}
	sort.Slice(r.sorted, func(i, j int) bool {
		return strings.ToLower(r.sorted[i].Name) < strings.ToLower(r.sorted[j].Name)
	})
	return r
}

// Get returns the definition of an agent type. Names match
// case-insensitively because models and users type them in any case.
func (r *Registry) Get(name string) (*Definition, bool) {
	d, ok := r.byName[strings.ToLower(strings.TrimSpace(name))]
	return d, ok
}

// All returns every definition, sorted by name.
func (r *Registry) All() []*Definition {
	return append([]*Definition(nil), r.sorted...)
}
