package agents

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/tool"
)

// ShowOptions are the arguments of `brood agents show`.
type ShowOptions struct {
	*Options
	Name string
}

// NewCmdShow builds `brood agents show NAME`.
func NewCmdShow(parent *Options, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Options: parent}
	return &cobra.Command{
		Use: "show NAME",
		Example: `  brood agents show general-purpose
  brood agents show reviewer --json`,
		Short: "Print one agent definition as resolved, prompt included",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			ro, err := opts.Registry()
			if err != nil {
				return err
			}
			reg, _ := registry.Load(ro)
			d, ok := reg.Get(args[0])
			if !ok {
				var names []string
				for _, d := range reg.All() {
					names = append(names, d.Name)
				}
				return fmt.Errorf("no agent named %q; known agents: %s", args[0], strings.Join(names, ", "))
			}
			if opts.JSON {
				return writeJSON(cmd.OutOrStdout(), showJSON{Definition: d, Timeout: durationText(d)})
			}
			return show(cmd.OutOrStdout(), ro, d)
		},
	}
}

// showJSON is a definition with its timeout spelled as a duration ("10m0s")
// rather than nanoseconds.
type showJSON struct {
	*registry.Definition
	Timeout string `json:"timeout,omitempty"`
}

func durationText(d *registry.Definition) string {
	if d.Timeout == 0 {
		return ""
	}
	return d.Timeout.String()
}

// show prints every field with the default it resolves to, so the reader
// sees what a dispatch will actually get, then the prompt.
func show(out io.Writer, ro registry.Options, d *registry.Definition) error {
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	tools := toolsText(d)
	switch {
	case d.SandboxReadOnly:
		tools += " (read-only agent: Bash runs under the kernel sandbox, or is withdrawn)"
	case d.ReadOnly:
		tools += " (read-only agent)"
	}
	delegate := "no"
	if d.Delegate {
		delegate = or(strings.Join(d.DelegateAllow, ", "), "any agent type")
	}
	priority, network := "default", "default"
	if d.HasPriority {
		priority = fmt.Sprint(d.Priority)
	}
	if d.Network != nil {
		network = map[bool]string{true: "allowed", false: "none"}[*d.Network]
	}
	maxTurns := "default"
	if d.MaxTurns > 0 {
		maxTurns = fmt.Sprint(d.MaxTurns)
	}
	source := string(d.Source)
	if d.Source != registry.SourceBuiltin {
		source += " (" + shortPath(ro, d.Path) + ")"
	}
	rows := [][2]string{
		{"name", d.Name},
		{"source", source},
		{"model", modelText(d)},
		{"tools", tools},
		{"mcp tools", mcpToolsText(d)},
		{"mcp servers", mcpServersText(d)},
		{"tool rules", strings.Join(d.ToolRules, ", ")},
		{"disallowed", strings.Join(append(append([]string(nil), d.DisallowedTools...), d.DenyRules...), ", ")},
		{"effort", or(d.Effort, "inherit")},
		{"max turns", maxTurns},
		{"background", fmt.Sprint(d.Background)},
		{"delegate", delegate},
		{"isolation", or(d.Isolation, "default")},
		{"timeout", or(durationText(d), "default")},
		{"priority", priority},
		{"network", network},
		{"web search", webSearchText(d)},
	}
	keys := make([]string, 0, len(d.Extra))
	for k := range d.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rows = append(rows, [2]string{k, fmt.Sprint(d.Extra[k]) + " (kept, not used by brood)"})
	}
	for _, o := range d.Overrides {
		rows = append(rows, [2]string{"overrides", shortPath(ro, o)})
	}
	// Every value (and an Extra key) may be a repository's text.
	out = termsafe.NewWriter(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		if r[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", termsafe.Line(r[0]), termsafe.Line(r[1]))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\ndescription:\n%s\n", indent(d.Description))
	if d.Prompt == "" {
		fmt.Fprintln(out, "\nprompt: (none: inherits the parent's system prompt)")
	} else {
		fmt.Fprintf(out, "\nprompt:\n%s\n", indent(d.Prompt))
	}
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}

// mcpToolsText names the MCP tools the agent gets: those it lists, or, when
// it lists no tools, every tool of the servers it inherits and names.
func mcpToolsText(d *registry.Definition) string {
	if d.AllTools {
		if len(d.MCPServers) == 0 {
			return ""
		}
		return "all tools of the MCP servers the parent has and of those below"
	}
	return strings.Join(d.MCPTools(), ", ")
}

// mcpServersText lists the definition's mcpServers: a name for a configured
// server (.mcp.json, ~/.claude.json), the command or url of an inline one.
func mcpServersText(d *registry.Definition) string {
	var out []string
	for _, s := range d.MCPServers {
		switch {
		case s.Spec == nil:
			out = append(out, s.Name+" (configured)")
		case s.Spec.Kind() == "stdio":
			out = append(out, fmt.Sprintf("%s (stdio: %s)", s.Name, strings.Join(append([]string{s.Spec.Command}, s.Spec.Args...), " ")))
		default:
			out = append(out, fmt.Sprintf("%s (%s: %s)", s.Name, s.Spec.Kind(), s.Spec.URL))
		}
	}
	return strings.Join(out, ", ")
}

// webSearchText says whether the agent gets WebSearch, the model
// provider's server-side search ("" when its tools do not name it).
func webSearchText(d *registry.Definition) string {
	if !d.AllTools && !slices.Contains(d.Tools, "WebSearch") {
		return ""
	}
	provider, _, qualified := strings.Cut(d.Model, "/")
	switch {
	case d.Network != nil && !*d.Network:
		return "not offered: network: none"
	case qualified && provider != "anthropic" || strings.HasPrefix(d.Model, "script:"):
		return "not offered: " + strings.TrimPrefix(tool.NoServerSearch, "WebSearch: ")
	}
	return "the provider's server-side search (Anthropic models; other providers run without it), with an allow rule WebSearch or WebSearch(domain:...)"
}
