// Package agents is the `brood agents` command: list the agent
// definitions the registry resolved, show one as resolved, and check
// definition files. It only renders what package registry computes; the
// root command supplies where to look, so this package never reads settings
// or the environment itself.
package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/textline"
)

// ErrCheckFailed is returned by `brood agents check` when a definition has
// an error; the root command maps it to exit status 1.
var ErrCheckFailed = errors.New("agent definitions have errors")

// Options is what the root command supplies, and the --json flag every
// verb shares.
type Options struct {
	// Registry says where definitions live (project root, home, whether
	// the .claude directories count). It is called when a subcommand runs,
	// after flags and settings have been resolved.
	Registry func() (registry.Options, error)
	// MaxDepth is the subagent depth cap in effect (maxSubagentDepth), for
	// check's warnings about tools that need room below it; nil: unknown.
	MaxDepth func() int
	JSON     bool
}

// NewCmdAgents builds `brood agents` (which lists) with its show and check
// verbs, reading definitions where f says. runF replaces the listing.
func NewCmdAgents(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	return newCmd(&Options{
		Registry: func() (registry.Options, error) { return f.RegistryOptions(), nil },
		MaxDepth: func() int { return f.Settings.MaxSubagentDepth },
	}, runF)
}

// newCmd builds the command over opts. Every form takes --json.
func newCmd(opts *Options, runF func(*Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use: "agents",
		Example: `  brood agents
  brood agents --json`,
		Short: "List the agent definitions subagents can be dispatched as",
		Long: "List every agent type the Task tool can dispatch, after precedence:\n" +
			"project (.brood/agents, .claude/agents) over user (~/.config/brood/agents,\n" +
			"~/.brood/agents, ~/.claude/agents) over built-in. Built-in names can't be\n" +
			"redefined. A file without name: is named by its file name.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			ro, err := opts.Registry()
			if err != nil {
				return err
			}
			reg, diags := registry.Load(ro)
			return list(cmd.OutOrStdout(), cmd.ErrOrStderr(), ro, reg, diags, opts.JSON)
		},
	}
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print JSON instead of text")
	cmd.AddCommand(NewCmdShow(opts, nil), NewCmdCheck(opts, nil))
	return cmd
}

// listItem is one row of `brood agents --json`.
type listItem struct {
	Name         string          `json:"name"`
	Source       registry.Source `json:"source"`
	Path         string          `json:"path"`
	Model        string          `json:"model"`
	Tools        []string        `json:"tools"`
	ToolRules    []string        `json:"tool_rules,omitempty"`
	AllTools     bool            `json:"all_tools"`
	Unresolvable bool            `json:"unresolvable,omitempty"`
	Description  string          `json:"description"`
}

func list(out, errOut io.Writer, ro registry.Options, reg *registry.Registry, diags []registry.Diagnostic, asJSON bool) error {
	if asJSON {
		items := []listItem{}
		for _, d := range reg.All() {
			items = append(items, listItem{
				Name: d.Name, Source: d.Source, Path: d.Path, Model: modelText(d),
				Tools: d.Tools, ToolRules: d.ToolRules, AllTools: d.AllTools, Unresolvable: d.Unresolvable,
				Description: firstLine(d.Description, 0),
			})
		}
		return writeJSON(out, struct {
			Agents      []listItem            `json:"agents"`
			Diagnostics []registry.Diagnostic `json:"diagnostics"`
		}{items, nonNil(diags)})
	}
	// Every cell is a repository's text: escaped (termsafe) before the
	// columns are measured, and the whole table once more on its way out.
	tw := tabwriter.NewWriter(termsafe.NewWriter(out), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tMODEL\tTOOLS\tDESCRIPTION")
	for _, d := range reg.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.Line(d.Name), termsafe.Line(sourceText(ro, d)),
			termsafe.Line(modelText(d)), termsafe.Line(listTools(d)), termsafe.Line(firstLine(d.Description, 72)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := len(diags); n > 0 {
		errs := 0
		for _, d := range diags {
			if d.Severity == registry.SeverityError {
				errs++
			}
		}
		fmt.Fprintf(errOut, "\n%d problem(s) in agent files (%d error(s), skipped); run `brood agents check` for details\n", n, errs)
	}
	return nil
}

// sourceText is the source with a path short enough to read: relative to
// the project root, or under ~ for the home directory.
func sourceText(ro registry.Options, d *registry.Definition) string {
	if d.Source == registry.SourceBuiltin {
		return string(d.Source)
	}
	return string(d.Source) + " " + shortPath(ro, d.Path)
}

func shortPath(ro registry.Options, p string) string {
	if ro.ProjectRoot != "" {
		if rel, err := filepath.Rel(ro.ProjectRoot, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	if ro.Home != "" {
		if rel, err := filepath.Rel(ro.Home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}

func modelText(d *registry.Definition) string {
	if d.Model == "" {
		return "inherit"
	}
	return d.Model
}

// listTools is the TOOLS column: clipped, but never a tool specifier (a
// rule such as Bash(python3:*) says what the agent may run unasked).
func listTools(d *registry.Definition) string {
	if len(d.ToolRules) > 0 {
		return toolsText(d)
	}
	return clip(toolsText(d), 36)
}

// toolsText summarises what the agent may use in a few words, and says
// when it may delegate.
func toolsText(d *registry.Definition) string {
	t := baseToolsText(d)
	if d.Delegate && !d.AllTools && !strings.Contains(t, "Task") {
		t += " + Task"
	}
	return t
}

func baseToolsText(d *registry.Definition) string {
	switch {
	case d.Unresolvable:
		return "none resolved (refused)"
	case d.AllTools && len(d.DisallowedTools) > 0:
		return "all but " + strings.Join(d.DisallowedTools, ", ")
	case d.AllTools:
		return "all"
	case len(d.Tools) == 0:
		return "none"
	case len(d.ToolRules) == 0 && strings.Join(d.Tools, ",") == strings.Join(registry.ReadOnlyTools(), ","):
		return "read-only"
	case len(d.ToolRules) == 0 && d.SandboxReadOnly && strings.Join(d.Tools, ",") == strings.Join(append(registry.ReadOnlyTools(), "Bash"), ","):
		return "read-only + Bash"
	}
	return strings.Join(withRules(d.Tools, d.ToolRules), ", ")
}

// withRules is tools with each one that specifiers narrow written as them
// (Read, Bash(python3:*)): what the list must not hide.
func withRules(tools, rules []string) []string {
	var out []string
	for _, t := range tools {
		var mine []string
		for _, r := range rules {
			if strings.HasPrefix(r, t+"(") {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			mine = []string{t}
		}
		out = append(out, mine...)
	}
	return out
}

// firstLine is the first non-blank line of s, clipped to max runes (0 = no
// limit).
func firstLine(s string, max int) string {
	l, _ := textline.First(strings.ReplaceAll(s, `\n`, "\n"))
	if max > 0 && l != "" {
		return registry.Summary(l, max)
	}
	return l
}

func clip(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// writeJSON writes v indented, with what a terminal would act on in a
// repository's text escaped (termsafe.JSON).
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termsafe.JSON(b), '\n'))
	return err
}

func nonNil(d []registry.Diagnostic) []registry.Diagnostic {
	if d == nil {
		return []registry.Diagnostic{}
	}
	return d
}
