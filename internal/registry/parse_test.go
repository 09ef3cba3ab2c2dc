package registry

import (
	"github.com/broodhq/brood/internal/mcpspec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseFront parses a definition whose frontmatter is name, description and
// the given extra lines.
func parseFront(t *testing.T, extra string) (*Definition, []Diagnostic) {
	t.Helper()
	file := "---\nname: a\ndescription: d\n" + extra + "---\nPrompt text.\n"
	return Parse("a.md", []byte(file), SourceUser)
}

func TestParseFields(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name  string
		extra string
		want  func(d *Definition) any // the part of the definition under test
		value any
		warn  string // substring of the one expected warning; "" = none
	}{
		{"no tools means all", "", func(d *Definition) any { return [2]any{d.AllTools, d.Tools} }, [2]any{true, []string(nil)}, ""},
		{"star means all", "tools: '*'\n", func(d *Definition) any { return d.AllTools }, true, ""},
		{"empty list means none", "tools: []\n", func(d *Definition) any { return [3]any{d.AllTools, d.Tools, d.Unresolvable} }, [3]any{false, []string{}, false}, ""},
		{"read-only", "tools: read-only\n", func(d *Definition) any { return [2]any{d.Tools, d.ReadOnly} }, [2]any{[]string{"Read", "Glob", "Grep", "LS"}, true}, ""},
		{"comma string, any case, aliases", "tools: read, GREP, MultiEdit, Agent, ls\n", func(d *Definition) any { return [2]any{d.Tools, d.ReadOnly} }, [2]any{[]string{"Read", "Grep", "Edit", "Task", "LS"}, false}, "given only to agents with delegate: true"},
		{"yaml list", "tools:\n  - Bash\n  - Write\n  - task_output\n", func(d *Definition) any { return d.Tools }, []string{"Bash", "Write", "TaskOutput"}, "given only to agents with delegate: true"},
		{"specifier stays one entry", "tools: Read, Bash(npm test:*, npm run lint), Bash(go vet:*)\n", func(d *Definition) any { return [2]any{d.Tools, d.ToolRules} }, [2]any{[]string{"Read", "Bash"}, []string{"Bash(npm test:*, npm run lint)", "Bash(go vet:*)"}}, ""},
		{"unknown tool dropped", "tools: Read, Teleport\n", func(d *Definition) any { return d.Tools }, []string{"Read"}, `unknown tool "Teleport"`},
		{"not provided dropped", "tools: Read, TodoWrite\n", func(d *Definition) any { return d.Tools }, []string{"Read"}, `does not provide the tool "TodoWrite"`},
		{"web fetch provided", "tools: Read, WebFetch\n", func(d *Definition) any { return d.Tools }, []string{"Read", "WebFetch"}, ""},
		{"mcp tool kept", "tools: Grep, mcp__github__search\n", func(d *Definition) any { return [3]any{d.Tools, d.MCPTools(), d.ReadOnly} }, [3]any{[]string{"Grep", "mcp__github__search"}, []string{"mcp__github__search"}, false}, ""},
		{"mcp tools only", "tools: mcp__github__search\n", func(d *Definition) any { return d.Unresolvable }, false, ""},
		{"mcp read-only sandbox", "tools: Read, mcp__github__*\nsandbox: read-only\n", func(d *Definition) any { return d.ReadOnly }, true, ""},
		{"mcpServers names", "mcpServers: [github, slack]\n", func(d *Definition) any { return d.MCPServers }, []MCPServer{{Name: "github"}, {Name: "slack"}}, ""},
		{"mcpServers inline", "mcpServers:\n  - github\n  - notes:\n      command: notes-server\n      args: [--stdio]\n", func(d *Definition) any { return d.MCPServers }, []MCPServer{{Name: "github"}, {Name: "notes", Spec: &mcpspec.Spec{Command: "notes-server", Args: []string{"--stdio"}}}}, ""},
		{"mcpServers mapping", "mcpServers:\n  docs: {type: http, url: \"https://example.com/mcp\"}\n", func(d *Definition) any { return d.MCPServers }, []MCPServer{{Name: "docs", Spec: &mcpspec.Spec{Type: "http", URL: "https://example.com/mcp"}}}, ""},
		{"mcpServers bad spec", "mcpServers:\n  - notes: {args: [x]}\n", func(d *Definition) any { return len(d.MCPServers) }, 0, "needs a command"},
		{"mcpServers bad name", "mcpServers: [\"a b\"]\n", func(d *Definition) any { return len(d.MCPServers) }, 0, "not a server name"},
		{"mcpServers unused", "tools: Read\nmcpServers: [github]\n", func(d *Definition) any { return len(d.MCPServers) }, 1, "add mcp__github__*"},
		{"nothing resolves", "tools: TodoWrite\n", func(d *Definition) any { return d.Unresolvable }, true, "refused at spawn"},
		{"tools of wrong type", "tools: {a: 1}\n", func(d *Definition) any { return d.AllTools }, true, "comma string or a list"},
		{"disallowed", "tools: Read, Bash, Write\ndisallowedTools: write, Bash(rm:*)\n", func(d *Definition) any { return [3]any{d.Tools, d.DisallowedTools, d.DenyRules} }, [3]any{[]string{"Read", "Bash"}, []string{"Write"}, []string{"Bash(rm:*)"}}, ""},
		{"disallowed unknown", "disallowedTools: [Nope]\n", func(d *Definition) any { return d.DisallowedTools }, []string(nil), `unknown tool "Nope"`},
		{"model inherit", "model: inherit\n", func(d *Definition) any { return d.Model }, "", ""},
		{"model alias", "model: Sonnet\n", func(d *Definition) any { return d.Model }, "sonnet", ""},
		{"model full id", "model: claude-haiku-4-5-20251001\n", func(d *Definition) any { return d.Model }, "claude-haiku-4-5-20251001", ""},
		{"model provider/model", "model: openai/gpt-4o\n", func(d *Definition) any { return d.Model }, "openai/gpt-4o", ""},
		{"model unknown", "model: fable\n", func(d *Definition) any { return d.Model }, "", `unknown model "fable"`},
		{"model not text", "model: [a]\n", func(d *Definition) any { return d.Model }, "", "not a model name"},
		{"effort", "effort: XHigh\n", func(d *Definition) any { return d.Effort }, "xhigh", ""},
		{"effort unknown", "effort: extreme\n", func(d *Definition) any { return d.Effort }, "", `"extreme" is not one of`},
		{"maxTurns", "maxTurns: 12\n", func(d *Definition) any { return d.MaxTurns }, 12, ""},
		{"max_turns quoted", "max_turns: \"7\"\n", func(d *Definition) any { return d.MaxTurns }, 7, ""},
		{"max_turns many", "max_turns: many\n", func(d *Definition) any { return d.MaxTurns }, 0, "not a whole number"},
		{"maxTurns negative", "maxTurns: -3\n", func(d *Definition) any { return d.MaxTurns }, 0, "must be positive"},
		{"both spellings", "maxTurns: 5\nmax_turns: 9\n", func(d *Definition) any { return d.MaxTurns }, 5, "given again (first on line 4)"},
		{"background", "background: true\n", func(d *Definition) any { return d.Background }, true, ""},
		{"background bad", "background: sometimes\n", func(d *Definition) any { return d.Background }, false, "not true or false"},
		{"delegate true", "delegate: true\n", func(d *Definition) any { return [2]any{d.Delegate, d.DelegateAllow} }, [2]any{true, []string(nil)}, ""},
		{"delegate list", "delegate: [explore, plan]\n", func(d *Definition) any { return [2]any{d.Delegate, d.DelegateAllow} }, [2]any{true, []string{"explore", "plan"}}, ""},
		{"delegate comma string", "delegate: explore, plan\n", func(d *Definition) any { return d.DelegateAllow }, []string{"explore", "plan"}, ""},
		{"delegate false", "delegate: \"false\"\n", func(d *Definition) any { return d.Delegate }, false, ""},
		{"delegate bad", "delegate: 3\n", func(d *Definition) any { return d.Delegate }, false, "neither true/false"},
		{"isolation", "isolation: worktree\n", func(d *Definition) any { return d.Isolation }, "worktree", ""},
		{"isolation bad", "isolation: vm\n", func(d *Definition) any { return d.Isolation }, "", "not one of auto, worktree, none"},
		{"timeout duration", "timeout: 10m\n", func(d *Definition) any { return d.Timeout }, 10 * time.Minute, ""},
		{"timeout seconds", "timeout: 90\n", func(d *Definition) any { return d.Timeout }, 90 * time.Second, ""},
		{"timeout quoted seconds", "timeout: \"1.5\"\n", func(d *Definition) any { return d.Timeout }, 1500 * time.Millisecond, ""},
		{"timeout bad", "timeout: soon\n", func(d *Definition) any { return d.Timeout }, time.Duration(0), "positive duration"},
		{"timeout zero", "timeout: 0\n", func(d *Definition) any { return d.Timeout }, time.Duration(0), "positive duration"},
		{"priority", "priority: 0\n", func(d *Definition) any { return [2]any{d.Priority, d.HasPriority} }, [2]any{0, true}, ""},
		{"priority negative", "priority: -2\n", func(d *Definition) any { return d.Priority }, -2, ""},
		{"priority bad", "priority: urgent\n", func(d *Definition) any { return d.HasPriority }, false, "not a whole number"},
		{"network false", "network: false\n", func(d *Definition) any { return d.Network }, &no, ""},
		{"network true", "network: yes\n", func(d *Definition) any { return d.Network }, &yes, ""},
		{"permission mode", "permissionMode: acceptedits\n", func(d *Definition) any { return d.PermissionMode }, "acceptEdits", ""},
		{"permission mode bad", "permissionMode: yolo\n", func(d *Definition) any { return d.PermissionMode }, "", "the parent's mode applies"},
		{"claude-only and unknown keys kept", "color: blue\nskills: [a, b]\nhooks:\n  Stop: x\nwhatever: 1\n", func(d *Definition) any { return d.Extra }, map[string]any{
			"color": "blue", "skills": []any{"a", "b"},
			"hooks": map[string]any{"Stop": "x"}, "whatever": uint64(1),
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := parseFront(t, tt.extra)
			if def == nil {
				t.Fatalf("did not load: %v", diags)
			}
			if got := tt.want(def); !reflect.DeepEqual(got, tt.value) {
				t.Errorf("got %#v, want %#v", got, tt.value)
			}
			if tt.warn == "" && len(diags) > 0 {
				t.Errorf("unexpected diagnostics %v", diags)
			}
			if tt.warn != "" {
				found := false
				for _, d := range diags {
					found = found || (d.Severity == SeverityWarning && strings.Contains(d.Message, tt.warn) && d.Line > 1)
				}
				if !found {
					t.Errorf("no warning with %q and a line in %v", tt.warn, diags)
				}
			}
		})
	}
}

func TestParseBasics(t *testing.T) {
	def, diags := Parse("x/reviewer.md", []byte("---\nname: Code-Reviewer\ndescription: Reviews diffs.\n---\n\n  You review.\n\n"), SourceProject)
	if len(diags) != 0 || def == nil {
		t.Fatalf("Parse: %v", diags)
	}
	want := &Definition{Name: "Code-Reviewer", Description: "Reviews diffs.", Prompt: "You review.",
		Path: "x/reviewer.md", Source: SourceProject, AllTools: true, nameLine: 2}
	if !reflect.DeepEqual(def, want) {
		t.Errorf("got %+v\nwant %+v", def, want)
	}
	// An empty body inherits the parent's prompt.
	def, _ = Parse("y.md", []byte("---\nname: y\ndescription: d\n---\n"), SourceUser)
	if def == nil || def.Prompt != "" {
		t.Errorf("empty body: %+v", def)
	}
}

func TestSplitTools(t *testing.T) {
	tests := map[string][]string{
		"Read, Grep":                {"Read", "Grep"},
		"Bash(a, b), Read":          {"Bash(a, b)", "Read"},
		" , Read,,":                 {"Read"},
		"Bash(x:(nested, y)), Edit": {"Bash(x:(nested, y))", "Edit"},
		"Bash(unclosed, Read":       {"Bash(unclosed, Read"},
		"":                          nil,
	}
	for in, want := range tests {
		if got := splitTools(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitTools(%q) = %q, want %q", in, got, want)
		}
	}
}
