// Package run is `brood run` (and `brood -p`): one agent to completion on a
// prompt, with Claude Code's headless habits — the prompt from an argument,
// stdin or both, --output-format text|json|stream-json, --continue and
// --resume, --allowedTools/--disallowedTools — and its exit status.
package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tool"
)

// Options are the flags of `brood run` (and of `brood demo`).
type Options struct {
	Factory *cmdutil.Factory
	Version string // for the stream-json init line

	Args         []string // the prompt's words; "-" reads it from stdin
	Prompt       string   // set from Args and stdin by Run
	Print        bool     // -p: accepted for claude -p habits; brood run is always headless
	Model        string
	Effort       string
	MaxTurns     int
	Tools        string
	SystemPrompt string
	Mode         string // legacy --mode text | json (brood's own event lines)
	OutputFormat string // text | json | stream-json
	Verbose      bool
	MaxStdin     string // how much of stdin a prompt may take (--max-stdin)
	Session      string
	Continue     bool
	Resume       string
	Allow        []string
	Deny         []string
	PermMode     string
	Budget       int64
	// Depth is --max-subagent-depth and --enable-subagents (HooCode's
	// flags): the tree-wide nesting cap for this run.
	Depth cmdutil.DepthFlags
	// Compat are claude -p's other flags (compat.go).
	Compat Compat
	notes  []string // the lines for the accepted-with-a-note flags given
}

// Efforts are the values --effort takes.
var efforts = []string{"low", "medium", "high", "xhigh", "max"}

// BindFlags adds the agent flags to cmd.
func (o *Options) BindFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Model, "model", "", "model as provider/model (anthropic/claude-sonnet-5-5, openai/gpt-5, ollama/qwen3, script:FILE)")
	f.Var(cmdutil.NewEnum(&o.Effort, "", efforts...), "effort", "reasoning effort: low, medium, high, xhigh or max")
	f.IntVar(&o.MaxTurns, "max-turns", 0, "stop with a partial result after this many model turns (default from settings: 50)")
	f.StringVar(&o.Tools, "tools", "", "comma-separated tools the agent may use (Read,Grep,...), or read-only; default all")
	f.StringVar(&o.SystemPrompt, "system-prompt", "", "replace the system prompt")
	f.Var(cmdutil.NewEnum(&o.Mode, "text", "text", "json"), "mode", "text, or json for brood's own event lines (see --output-format for Claude Code's)")
	f.Var(cmdutil.NewEnum(&o.OutputFormat, "", "text", "json", "stream-json"), "output-format", "text (the answer), json (one result object) or stream-json (one JSON object per line as the run goes), as claude -p")
	f.BoolVar(&o.Verbose, "verbose", false, "accepted for claude -p compatibility (stream-json is always complete)")
	f.StringVar(&o.MaxStdin, "max-stdin", defaultMaxStdin, "the most a prompt piped on stdin may hold (e.g. 4MB); more is refused")
	f.BoolVarP(&o.Print, "print", "p", false, "headless: print the answer and exit (brood run always is; for claude -p habits)")
	f.StringVar(&o.Session, "session", "", "transcript file to continue (and append to)")
	f.BoolVarP(&o.Continue, "continue", "c", false, "continue the most recent session in this project")
	f.StringVarP(&o.Resume, "resume", "r", "", "continue the session with this id (a unique prefix, any case)")
	cmdutil.StringArrayVar(f, &o.Allow, "allow", nil, "permission rule to allow, e.g. 'Bash(go test:*)' or 'Edit(src/**)' (repeatable)")
	cmdutil.StringArrayVar(f, &o.Deny, "deny", nil, "permission rule to deny (repeatable)")
	cmdutil.StringArrayVar(f, &o.Allow, "allowedTools", nil, "as --allow; a comma- or space-separated list, and every following argument up to the next flag, as Claude Code takes it")
	cmdutil.StringArrayVar(f, &o.Deny, "disallowedTools", nil, "as --deny, and a bare tool name takes the tool off the model's list; a comma- or space-separated list, variadic")
	cmdutil.StringArrayVar(f, &o.Allow, "allowed-tools", nil, "as --allowedTools")
	cmdutil.StringArrayVar(f, &o.Deny, "disallowed-tools", nil, "as --disallowedTools")
	o.Compat.Bind(cmd)
	f.Var(cmdutil.NewEnum(&o.PermMode, "", "default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"), "permission-mode", "default, acceptEdits, bypassPermissions, plan or dontAsk")
	f.Int64Var(&o.Budget, "token-budget", 0, "advisory token budget: warnings at 80% and 100%, never a stop")
	o.Depth.Bind(cmd)
	if fac := o.Factory; fac != nil {
		_ = cmd.RegisterFlagCompletionFunc("model", fac.CompleteModels)
		_ = cmd.RegisterFlagCompletionFunc("resume", fac.CompleteSessionIDs)
	}
	_ = cmd.RegisterFlagCompletionFunc("effort", cobra.FixedCompletions(efforts, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("output-format", cobra.FixedCompletions([]string{"text", "json", "stream-json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("permission-mode", cobra.FixedCompletions([]string{"default", "acceptEdits", "bypassPermissions", "plan"}, cobra.ShellCompDirectiveNoFileComp))
}

// NewCmdRun builds `brood run`. runF replaces the run (tests of the flags).
func NewCmdRun(f *cmdutil.Factory, version string, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f, Version: version}
	cmd := &cobra.Command{
		Use:   "run [flags] [PROMPT | -]",
		Short: "Run one agent to completion (brood -p PROMPT is the same)",
		Long: `Run one agent on PROMPT until it answers without a tool call or reaches the
turn cap. The prompt is the arguments, or stdin (with "-" or when stdin is a
pipe or a file), or both: piped text after the arguments, as context, as
claude -p takes it.

--output-format text (the default) prints the answer on stdout as it arrives
and progress on stderr; json prints one result object (Claude Code's shape:
result, num_turns, usage, total_cost_usd, session_id, subagent_stats);
stream-json prints one JSON object per line as the run goes. Every run
appends to a transcript under .brood/sessions/; continue the last one with
--continue, or any with --resume ID.`,
		Example: `  brood run "what does this repository do?"
  brood -p "what does this repository do?" --output-format json | jq .result
  git diff | brood run "review this change"
  brood run "make the tests pass" --allowedTools "Bash(go test:*)" Edit
  brood run --continue "now add a test for it"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.notes = opts.Compat.Notes(cmd)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	opts.BindFlags(cmd)
	return cmd
}

// output is how a run is shown: text, brood's event lines, or Claude
// Code's json / stream-json.
type output interface {
	Start(render.Info)
	Event(agent.Event)
	DispatchEvent(spawn.Event)
	Done(o *agent.Outcome, sessionPath string, t render.Totals)
}

// withProgress is an output that also shows the subagents' progress lines
// on stderr.
type withProgress struct {
	output
	progress *render.Progress
}

func (w withProgress) DispatchEvent(ev spawn.Event) {
	w.output.DispatchEvent(ev)
	w.progress.DispatchEvent(ev)
}

// format is the effective output format: text, events (--mode json), json
// or stream-json.
func (o *Options) format() string {
	switch {
	case o.OutputFormat != "":
		return o.OutputFormat
	case o.Mode == "json":
		return "events"
	}
	return "text"
}

// newOutput is the run's output, and what flushes it when the run ends.
// Every format but text on a terminal passes the project's redactor: the
// JSON ones string by string, text line by line (a .env value the model
// Read and quoted in its answer reaches no pipe, file or CI log; on a
// terminal the answer streams as it comes, as the interactive mode shows
// it).
func (o *Options) newOutput() (output, func()) {
	f := o.Factory
	// What brood prints to stderr (progress, tool inputs, children's
	// words) passes the redactor in every format.
	errW := render.RedactWriter(f.Err, f.Redactor.Redact)
	switch o.format() {
	case "events":
		return render.New(f.Out, errW, "json").Redacting(f.Redactor), func() {}
	case "json":
		h := render.NewHeadless(f.Out, false).Redacting(f.Redactor)
		if o.Verbose || f.ErrTerminal {
			// One document at the end on stdout; meanwhile a person sees
			// the subagents' progress on stderr.
			return withProgress{h, render.NewProgress(errW)}, func() {}
		}
		return h, func() {}
	case "stream-json":
		h := render.NewHeadless(f.Out, true).Redacting(f.Redactor).Partial(o.Compat.Partial)
		if o.Compat.ReplayUser {
			h.Replay(o.Compat.replay)
		}
		return h, func() {}
	}
	if f.OutTerminal {
		return render.NewText(f.Out, errW, true), func() {}
	}
	w := f.Redactor.Writer(f.Out)
	return render.NewText(w, errW, false), func() { _ = w.Close() }
}

// Run runs the root agent on the prompt to its outcome.
func Run(ctx context.Context, o *Options) error {
	f := o.Factory
	if err := o.Depth.Apply(f); err != nil {
		return err
	}
	if err := o.applyCompat(); err != nil {
		return err
	}
	// The prompt first, as claude -p: with none there is nothing to run,
	// whatever the model.
	if err := o.readPrompt(); err != nil {
		return err
	}
	if err := o.needPrompt(); err != nil {
		return err
	}
	s := f.Settings
	spec := cmdutil.FirstNonEmpty(o.Model, s.Model, claudeDefaultModel(f.Getenv))
	if _, err := f.ResolveModel(spec); err != nil {
		return err // said before anything else, and no session is left behind
	}
	tools, err := cmdutil.SelectTools(o.Tools)
	if err != nil {
		return cmdutil.ExitCode(cmdutil.ExitUsage, err)
	}
	schema, err := o.Compat.schema(f.Links.Delegation.Schemas)
	if err != nil {
		return cmdutil.ExitCode(1, err)
	}
	history, path, tmp, claim, err := openSession(f, o)
	if err != nil {
		return err
	}
	if tmp != "" {
		defer os.RemoveAll(tmp)
	}
	defer traceDone(ctx, path) // run last: the closers are the run's
	system, files, err := o.systemPrompt(ctx)
	if err != nil {
		return err
	}
	out, flush := o.newOutput()
	defer flush()
	quiet := o.format() != "text"
	// --token-budget reaches the children too (each is warned against it),
	// and the root's budget counts what they spent (UsageBelow).
	f.Settings.TokenBudget = cmdutil.FirstPositive(o.Budget, s.TokenBudget)
	prices, err := f.Prices()
	if err != nil {
		return err
	}
	bill := &bill{prices: prices, root: f.ProjectRoot}
	pt, ask, prompter, childAsk := o.askers()
	spawntrace.RootMark(ctx, "prepared")
	// One assembly with the interactive mode's (package root): the tools'
	// environment and the transcript redact with the project's redactor
	// (the environment, the project's .env values, key formats).
	rt, err := root.New(ctx, f, root.Options{
		Agent: true, Model: spec, Effort: o.Effort, Perms: o.permissionFlags(),
		System: system, SystemFiles: files, Tools: tools, MCP: isAllTools(o.Tools),
		Transcript: path, Claim: claim, MaxTurns: o.MaxTurns, TokenBudget: o.Budget, Ask: ask, Prompt: prompter, ChildAsk: childAsk,
		OnEvent: bill.observe(out.DispatchEvent), Quiet: quiet, Warm: true, AddDirs: o.Compat.AddDirs,
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	spawntrace.RootMark(ctx, "assembled")
	bill.model = priceKey(prices, spec, rt.Model)
	cfg := rt.Agent
	// The prompt tool is found before the prompt's hooks run: a name the
	// run has no tool for exits before anything has been done.
	unbind, err := pt.bindRun(ctx, f, cfg.Tools, cfg.Env, isAllTools(o.Tools))
	if err != nil {
		return err
	}
	defer unbind()
	prompt, err := rt.Hooks.Prompt(ctx, o.Prompt, o.Session != "")
	if err != nil {
		return cmdutil.ExitCode(1, err)
	}
	ctx = telemetry.NewContext(ctx, rt.Telemetry) // for the Workflow tool's runs
	out.Start(o.startInfo(rt, path))
	return finish(ctx, f, cfg, history, prompt, path, out, rt.Dispatcher, bill, finishOpts{broodCodes: o.Compat.BroodExitCodes, budgetUSD: o.Compat.MaxBudgetUSD, schema: schema, fallback: o.Compat.FallbackModel})
}

// startInfo is what the output announces at the start. The offered
// tools, the agents and the MCP servers' status are only on stream-json's
// init line: another format does not build every tool's schema, nor read
// ~/.claude.json again, for them.
func (o *Options) startInfo(rt *root.Root, path string) render.Info {
	f, cfg := o.Factory, rt.Agent
	info := render.Info{
		SessionPath: path, Cwd: f.Cwd, Model: rt.Spec,
		PermissionMode: cmdutil.FirstNonEmpty(o.PermMode, f.Settings.Permissions.Mode), Version: o.Version, Root: f.ProjectRoot,
		APIKeySource: apiKeySource(f.Getenv, rt.Spec), AddDirs: o.Compat.AddDirs,
	}
	if o.format() != "stream-json" {
		return info
	}
	info.Tools = offeredTools(cfg)
	if rt.Dispatcher != nil {
		// The registry the dispatcher loaded (a root's allows every
		// agent), not a second load of every definition.
		info.Agents = rt.Dispatcher.AgentNames()
	}
	if isAllTools(o.Tools) {
		info.MCPServers = o.Compat.serverStatus(f, cmdutil.ToolList(cfg.Tools))
	}
	return info
}

// traceDone marks the end of a traced root's run (brood bench,
// spawntrace.RootEnvVar) and writes its record beside the transcript; an
// untraced run does nothing.
func traceDone(ctx context.Context, transcript string) {
	spawntrace.RootMark(ctx, "done")
	_ = spawntrace.WriteRoot(ctx, filepath.Dir(transcript), root.SessionID(transcript)+spawntrace.RootFileSuffix) // the bench's, never the run's
}

// offeredTools names the tools the model is offered, as the init line
// lists them: a server tool (WebSearch) only where the agent loop will
// send it (tool.Set.Offer: the provider runs it, the agent has the
// network, the rules allow it).
func offeredTools(cfg agent.Config) []string {
	if cfg.Tools == nil {
		return nil
	}
	specs, _ := cfg.Tools.Offer(cfg.Env, cfg.Model)
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// askers are who answers the permission questions: a person at the
// terminal (text mode), or --permission-prompt-tool's MCP tool (pt, bound
// once the tools are there), which then decides the root's questions and
// its subagents', also on a terminal: the user named who answers.
func (o *Options) askers() (pt *promptTool, ask func(tool, subject, reason string, rules []string) bool, prompter tool.PromptFunc, childAsk spawn.AskFunc) {
	pt = &promptTool{name: o.Compat.PromptTool}
	if pt.name == stdioPromptTool {
		// The Agent SDK's control protocol: brood has none.
		fmt.Fprintln(o.Factory.Err, stdioNote)
		pt.name = ""
	}
	if pt.name == "" {
		return pt, terminalAsker(o.Factory, o.format()), nil, nil
	}
	return pt, nil, pt.decide, pt.childAsk
}

// isAllTools reports whether --tools gives the agent every tool (and so
// the configured MCP servers' too, as Claude Code's main agent has them).
func isAllTools(spec string) bool {
	t := strings.TrimSpace(spec)
	return t == "" || t == "*"
}

// applyCompat applies claude -p's flags before the run is set up: the
// notes of the flags brood only accepts, --settings, the permission
// lists, --mcp-config, --dangerously-skip-permissions and --add-dir.
func (o *Options) applyCompat() error {
	f := o.Factory
	for _, n := range o.notes {
		fmt.Fprintln(f.Err, n)
	}
	if err := o.Compat.applySettings(f); err != nil {
		return err
	}
	if err := o.Compat.applyAgents(f); err != nil {
		return err
	}
	if err := o.checkStreamFlags(); err != nil {
		return err
	}
	o.Allow, o.Deny = cmdutil.SplitRules(o.Allow), cmdutil.SplitRules(o.Deny)
	if err := o.Compat.applyMCP(f); err != nil {
		return err
	}
	if o.Compat.SkipPermissions && o.PermMode == "" {
		o.PermMode = "bypassPermissions"
	}
	// A trusted .claude/settings.json's permissions.additionalDirectories
	// are --add-dir's (Resolve held an untrusted project's back).
	// One that is not a directory is skipped with a warning, as Claude
	// Code's (a flag's stops the run).
	var dirs []string
	for _, d := range f.Settings.Permissions.AdditionalDirectories {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			fmt.Fprintf(f.Err, "brood: warning: .claude/settings.json permissions.additionalDirectories: %s is not a directory; skipped\n", d)
			continue
		}
		dirs = append(dirs, d)
	}
	o.Compat.AddDirs = append(dirs, o.Compat.AddDirs...)
	if err := o.Compat.addDirs(f.Cwd, f.Err); err != nil {
		return err
	}
	if len(o.Compat.AddDirs) > 0 {
		// Their .env values are redacted as the project's (and handed to
		// every child): made before anything takes the redactor.
		f.Redactor = tool.NewProjectRedactor(f.Environ, append([]string{f.ProjectRoot}, o.Compat.AddDirs...)...)
	}
	o.Allow = append(o.Allow, o.Compat.addDirRules(cmdutil.FirstNonEmpty(o.PermMode, f.Settings.Permissions.Mode))...)
	return nil
}

// systemPrompt is the root's system prompt: --system-prompt (or its
// -file form, or brood's default), the instruction files, then
// --append-system-prompt; and the instruction files alone, for the
// children, who get them by their own right (the dispatcher's
// ProjectFiles), not through an inherited prompt.
func (o *Options) systemPrompt(ctx context.Context) (system, files string, err error) {
	f := o.Factory
	base, err := o.Compat.systemFile()
	if err != nil {
		return "", "", cmdutil.ExitCode(1, err)
	}
	base = cmdutil.FirstNonEmpty(o.SystemPrompt, base)
	if base == "" {
		base = cmdutil.DefaultSystemPrompt(f.Cwd)
	}
	appendix, err := o.Compat.appendix()
	if err != nil {
		return "", "", cmdutil.ExitCode(1, err)
	}
	files = f.ProjectFilesPrompt(ctx, o.Deny) // (the flags' rules; the settings' are added)
	return base + files + appendix, files, nil
}

func (o *Options) permissionFlags() cmdutil.PermissionFlags {
	return cmdutil.PermissionFlags{Mode: o.PermMode, Allow: o.Allow, Deny: o.Deny}
}

// isStdin reports whether the arguments ask for the prompt on stdin.
func (o *Options) isStdin() bool { return len(o.Args) == 1 && o.Args[0] == "-" }

// promptArgs is the prompt the arguments give.
func (o *Options) promptArgs() string {
	if o.isStdin() {
		return ""
	}
	return strings.Join(o.Args, " ")
}
