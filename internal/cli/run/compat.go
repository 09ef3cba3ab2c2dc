package run

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/tool"
)

// Compat are Claude Code's `claude -p` flags brood takes so a CI script
// runs unchanged: some work as there, the rest are accepted with one line
// on stderr saying what brood does instead (docs/cli.md has the table).
type Compat struct {
	SkipPermissions  bool
	AppendSystem     string
	AppendSystemFile string
	SystemPromptFile string
	InputFormat      string
	BroodExitCodes   bool
	MaxBudgetUSD     float64
	JSONSchema       string
	FallbackModel    string
	// SessionID names a new session (a UUID, as Claude Code takes it).
	SessionID string
	// AddDirs are --add-dir's directories (absolute once resolved).
	AddDirs []string
	// Settings is --settings: a Claude Code settings file or JSON string
	// (settings_flag.go).
	Settings string
	// MCPConfig are --mcp-config's files or JSON strings; StrictMCP
	// (--strict-mcp-config) makes their servers the only ones.
	MCPConfig []string
	StrictMCP bool
	// NoPersistence keeps the transcript out of .brood/sessions: nothing
	// for --continue or --resume to find.
	NoPersistence bool
	// Agents is --agents: Claude Code's JSON object of session agents, or
	// a file holding one (agents_flag.go).
	Agents string
	// ForkSession (--fork-session) continues --continue's or --resume's
	// session in a copy under a new id, the old one left as it was.
	ForkSession bool
	// ReplayUser (--replay-user-messages) echoes stdin's user messages on
	// stdout; replay holds their contents (--input-format stream-json).
	ReplayUser bool
	replay     []json.RawMessage
	// Partial (--include-partial-messages) adds stream_event lines to
	// stream-json (render/partial.go).
	Partial bool
	// PromptTool (--permission-prompt-tool) is the MCP tool that decides
	// the calls needing approval (prompt_tool.go).
	PromptTool string
}

// notes are the accepted-with-a-note flags: name, takes a value, help,
// and the line printed when it is given.
var notes = []struct {
	name, kind, help, note string
}{
	{"allow-dangerously-skip-permissions", "bool", "accepted for claude -p compatibility", "brood offers no permission bypass to switch on later; use --dangerously-skip-permissions"},
	{"debug", "string", "accepted for claude -p compatibility", "brood has no debug log; use --output-format stream-json, or OpenTelemetry (OTEL_EXPORTER_OTLP_ENDPOINT; docs/observability.md)"},
	{"bare", "bool", "accepted for claude -p compatibility", "hooks, CLAUDE.md and MCP servers are loaded as usual"},
	{"disable-slash-commands", "bool", "accepted for claude -p compatibility", "brood -p has no slash commands"},
	{"betas", "list", "accepted for claude -p compatibility", "no beta headers are sent"},
	{"name", "string", "accepted for claude -p compatibility", "sessions are named by their id"},
}

// Bind adds the compatibility flags to cmd.
func (c *Compat) Bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&c.SkipPermissions, "dangerously-skip-permissions", false, "as --permission-mode bypassPermissions (claude -p's flag)")
	f.StringVar(&c.AppendSystem, "append-system-prompt", "", "add this text to the end of the system prompt")
	f.StringVar(&c.AppendSystemFile, "append-system-prompt-file", "", "add this file's text to the end of the system prompt")
	f.StringVar(&c.SystemPromptFile, "system-prompt-file", "", "replace the system prompt with this file's text")
	f.Var(cmdutil.NewEnum(&c.InputFormat, "text", "text", "stream-json"), "input-format", "text, or stream-json: user messages as JSON lines on stdin (claude -p's)")
	f.BoolVar(&c.BroodExitCodes, "brood-exit-codes", false, "exit 3 at the turn cap, 4 at a checkpoint, 5 for a killed subagent (default: 1, as claude -p)")
	f.Float64Var(&c.MaxBudgetUSD, "max-budget-usd", 0, "stop the run when the whole tree's estimated spend (total_cost_usd) reaches this many dollars")
	f.StringVar(&c.FallbackModel, "fallback-model", "", "model to continue with when the model's calls fail (after their retries)")
	f.StringVar(&c.JSONSchema, "json-schema", "", "JSON Schema the answer must validate against; the value is the result's structured_output")
	cmdutil.StringArrayVar(f, &c.AddDirs, "add-dir", nil, "more directories the agent works in: named in its prompt, and under acceptEdits its edits there are allowed as in the project; variadic")
	f.StringVar(&c.Settings, "settings", "", "a Claude Code settings file or JSON string: its permissions, model and env, above the settings files")
	cmdutil.StringArrayVar(f, &c.MCPConfig, "mcp-config", nil, "MCP servers from these JSON files or strings ({\"mcpServers\":{...}}), as claude -p's; variadic")
	f.BoolVar(&c.StrictMCP, "strict-mcp-config", false, "use only the MCP servers of --mcp-config, none of the configured ones")
	f.StringVar(&c.SessionID, "session-id", "", "the new session's id (a UUID); continue it later with --resume ID")
	f.BoolVar(&c.NoPersistence, "no-session-persistence", false, "write the transcript to a temporary directory, removed at the end: nothing for --continue or --resume")
	f.StringVar(&c.Agents, "agents", "", "agents for this run, as a JSON object ('{\"reviewer\":{\"description\":\"Reviews code\",\"prompt\":\"You are a code reviewer\"}}') or a file holding one; they beat the agent files")
	f.BoolVar(&c.ForkSession, "fork-session", false, "with --continue or --resume: continue in a copy of the session under a new id (or --session-id's), the old one left as it was")
	f.BoolVar(&c.ReplayUser, "replay-user-messages", false, "echo the user messages read on stdin back on stdout (--input-format and --output-format stream-json)")
	f.BoolVar(&c.Partial, "include-partial-messages", false, "stream-json: the model's stream events (stream_event lines) as they arrive")
	f.StringVar(&c.PromptTool, "permission-prompt-tool", "", "MCP tool (mcp__server__tool) that decides the calls needing approval, as claude -p calls it")
	// Read before the settings are (cli.go's PersistentPreRunE).
	f.String("setting-sources", "", "the settings files to read, comma-separated: user, project, local (default all)")
	for _, n := range notes {
		switch n.kind {
		case "bool":
			f.Bool(n.name, false, n.help)
		case "list":
			cmdutil.StringArray(f, n.name, nil, n.help)
		default:
			f.String(n.name, "", n.help)
		}
	}
	f.Lookup("debug").NoOptDefVal = "all" // -d, --debug [filter]
}

// Notes are the lines to print for the accepted-with-a-note flags cmd
// was given, in the order of the table.
func (c *Compat) Notes(cmd *cobra.Command) []string {
	var out []string
	for _, n := range notes {
		if cmd.Flags().Changed(n.name) {
			out = append(out, fmt.Sprintf("brood: --%s: accepted; %s", n.name, n.note))
		}
	}
	return out
}

// schema compiles --json-schema (nil without it).
func (c *Compat) schema(compile call.Compiler) (*call.Schema, error) {
	if c.JSONSchema == "" {
		return nil, nil
	}
	s, err := call.CompileSchema(compile, json.RawMessage(c.JSONSchema))
	switch {
	case err != nil && (!json.Valid([]byte(c.JSONSchema)) || !strings.HasPrefix(strings.TrimSpace(c.JSONSchema), "{")):
		return nil, fmt.Errorf("--json-schema: %w; give a JSON Schema object, e.g. '{\"type\":\"object\"}'", err)
	case err != nil:
		return nil, fmt.Errorf("--json-schema: %w", err) // it says what to change
	}
	return s, nil
}

// systemFile is --system-prompt-file's text, or "".
func (c *Compat) systemFile() (string, error) {
	if c.SystemPromptFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(c.SystemPromptFile)
	if err != nil {
		return "", fmt.Errorf("--system-prompt-file: %w", err)
	}
	return string(b), nil
}

// appendix is --append-system-prompt and --append-system-prompt-file, to
// add at the end of the root's system prompt.
func (c *Compat) appendix() (string, error) {
	parts := []string{}
	if len(c.AddDirs) > 0 {
		parts = append(parts, "Additional working directories (--add-dir): "+strings.Join(c.AddDirs, ", "))
	}
	if c.AppendSystem != "" {
		parts = append(parts, c.AppendSystem)
	}
	if c.AppendSystemFile != "" {
		b, err := os.ReadFile(c.AppendSystemFile)
		if err != nil {
			return "", fmt.Errorf("--append-system-prompt-file: %w", err)
		}
		parts = append(parts, string(b))
	}
	if len(parts) == 0 {
		return "", nil
	}
	return "\n\n" + strings.Join(parts, "\n\n"), nil
}

// streamJSONPrompt reads --input-format stream-json: one JSON object per
// line, {"type":"user","message":{"role":"user","content":...}}, content
// a string or a list of blocks; the user messages' text, in order, is
// the prompt. users are their contents as given (--replay-user-messages
// echoes them).
func streamJSONPrompt(r io.Reader) (string, []json.RawMessage, error) {
	text, err := readStdin(r, maxStreamJSON)
	if err != nil {
		return "", nil, err
	}
	var parts []string
	var users []json.RawMessage
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return "", nil, fmt.Errorf("--input-format stream-json: stdin line %d: %v; each line must be a JSON object like {\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"...\"}}", i+1, err)
		}
		if m.Type != "user" {
			continue
		}
		users = append(users, m.Message.Content)
		var s string
		if json.Unmarshal(m.Message.Content, &s) == nil {
			parts = append(parts, s)
			continue
		}
		var blocks []struct{ Type, Text string }
		if err := json.Unmarshal(m.Message.Content, &blocks); err != nil {
			return "", nil, fmt.Errorf("--input-format stream-json: stdin line %d: message.content is neither a string nor a list of blocks", i+1)
		}
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
	}
	return strings.Join(parts, "\n"), users, nil
}

// claudeModel is the model Claude Code 2.1.332 uses when none is named.
const claudeModel = "claude-opus-5-5"

// claudeDefaultModel is the model a run without --model or a configured
// one uses, as `claude -p` picks it: $ANTHROPIC_MODEL, else Claude Code's
// default when an Anthropic key is in the environment; else "" (brood
// then says how to configure one).
func claudeDefaultModel(getenv func(string) string) string {
	if m := getenv("ANTHROPIC_MODEL"); m != "" {
		return "anthropic/" + strings.TrimPrefix(m, "anthropic/")
	}
	if getenv("ANTHROPIC_API_KEY") != "" || getenv("ANTHROPIC_AUTH_TOKEN") != "" {
		return "anthropic/" + claudeModel
	}
	return ""
}

// apiKeySource is where the model's key comes from, as Claude Code's
// init line names it: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) for an
// Anthropic model, else none (another provider's key is not Claude
// Code's business).
func apiKeySource(getenv func(string) string, spec string) string {
	if p, _, ok := strings.Cut(spec, "/"); ok && p != "anthropic" {
		return "none"
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
		if getenv(k) != "" {
			return k
		}
	}
	return "none"
}

// applyMCP adds --mcp-config's servers to the factory's (only them under
// --strict-mcp-config), before the run's agents and children read them.
func (c *Compat) applyMCP(f *cmdutil.Factory) error {
	if len(c.MCPConfig) == 0 && !c.StrictMCP {
		return nil
	}
	servers, warns, err := c.mcpServers()
	if err != nil {
		return cmdutil.ExitCode(cmdutil.ExitFailed, err)
	}
	for _, w := range warns {
		fmt.Fprintln(f.Err, "brood: mcp:", w)
	}
	f.AddMCPServers(servers, c.StrictMCP)
	return nil
}

// mcpServers are the servers --mcp-config names: each value a JSON
// string ({"mcpServers": {...}}) or a file holding one, later ones
// replacing earlier ones of the same name. The user named them on the
// command line: they need no project trust. A server that cannot be used
// is left out with a warning; a value that is no such JSON is an error.
func (c *Compat) mcpServers() (map[string]mcpspec.Spec, []string, error) {
	out := map[string]mcpspec.Spec{}
	var warns []string
	for _, v := range c.MCPConfig {
		name, data := "--mcp-config", []byte(v)
		if t := strings.TrimSpace(v); !strings.HasPrefix(t, "{") {
			b, err := os.ReadFile(v)
			if err != nil {
				return nil, nil, fmt.Errorf("--mcp-config: %w; give a file or a JSON string like '{\"mcpServers\":{\"name\":{\"command\":\"...\"}}}'", err)
			}
			name, data = "--mcp-config "+v, b
		}
		servers, w, err := mcpspec.ParseFile(name, data) // its errors name the flag (and the file)
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
		maps.Copy(out, servers)
	}
	return out, warns, nil
}

// addDirs resolves --add-dir's directories to absolute paths, each an
// existing directory whose name no permission rule would read as a
// pattern. One that holds the home directory, brood's or Claude Code's
// configuration or a path no subagent may read (isolate.AddDirRefused)
// is dropped with a warning on errw.
func (c *Compat) addDirs(cwd string, errw io.Writer) error {
	if len(c.AddDirs) == 0 {
		// No directory to check: the hidden paths (a few hundred stats of
		// the credential stores) are not resolved on the root's start.
		return nil
	}
	kept := c.AddDirs[:0]
	hidden := isolate.NewPolicyBase(nil).Hidden()
	for _, d := range c.AddDirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		d = filepath.Clean(d)
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--add-dir: %w", err))
		case !fi.IsDir():
			return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--add-dir %s: not a directory", d))
		case strings.ContainsAny(d, "*?[]{}\\,"):
			return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--add-dir %s: brood cannot name a directory with *?[]{}\\ or a comma in a permission rule; add a link to it without them", d))
		}
		if why := isolate.AddDirRefused(d, hidden); why != "" {
			fmt.Fprintf(errw, "brood: warning: --add-dir %s: %s (a subagent writing there could change your configuration or read what brood hides from it); skipped\n", d, why)
			continue
		}
		kept = append(kept, d)
	}
	c.AddDirs = kept
	return nil
}

// addDirRules are the allow rules --add-dir means under acceptEdits:
// edits in the added directories are allowed as in the project, as
// Claude Code has them. In the other modes they add no rule (default asks,
// plan refuses, bypassPermissions allows anyway).
func (c *Compat) addDirRules(mode string) []string {
	if mode != "acceptEdits" {
		return nil
	}
	var rules []string
	for _, d := range c.AddDirs {
		for _, t := range []string{"Edit", "Write"} {
			rules = append(rules, t+"("+d+"/**)")
		}
	}
	return rules
}

// serverStatus is stream-json's mcp_servers: each configured server,
// connected when it gave the root tools, else failed (its reason was said
// on stderr), and where it came from as Claude Code names it: dynamic
// (--mcp-config), user (~/.claude.json) or project (.mcp.json).
func (c *Compat) serverStatus(f *cmdutil.Factory, tools []tool.Tool) []render.MCPServer {
	gave := map[string]bool{}
	for _, t := range tools {
		if srv, _, ok := mcpspec.SplitToolName(t.Spec().Name); ok {
			gave[srv] = true
		}
	}
	dynamic, _, _ := c.mcpServers()
	user := mcpspec.Load(mcpspec.Sources{Home: f.Home}).Servers
	out := []render.MCPServer{}
	configured := f.MCPServers()
	for _, n := range slices.Sorted(maps.Keys(configured)) {
		st, src := "failed", "project"
		if gave[mcpspec.Normalize(n)] || gave[n] {
			st = "connected"
		}
		if _, ok := dynamic[n]; ok {
			src = "dynamic"
		} else if _, ok := user[n]; ok {
			src = "user"
		}
		out = append(out, render.MCPServer{Name: n, Status: st, Source: src})
	}
	return out
}
