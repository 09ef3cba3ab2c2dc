package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/tool"
)

// runOptions are the flags of `brood run` (and of the child protocol).
type runOptions struct {
	Model        string
	Effort       string
	MaxTurns     int
	Tools        string
	SystemPrompt string
	Mode         string // text | json
	Session      string
	Allow        []string
	Deny         []string
	PermMode     string
	Budget       int64
}

func (o *runOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Model, "model", "", "model as provider/model (anthropic/claude-sonnet-5-5, openai/gpt-5, ollama/qwen3, script:FILE)")
	f.StringVar(&o.Effort, "effort", "", "reasoning effort: low, medium, high, xhigh or max")
	f.IntVar(&o.MaxTurns, "max-turns", 0, "stop with a partial result after this many model turns (default from settings: 50)")
	f.StringVar(&o.Tools, "tools", "", "comma-separated tools the agent may use (Read,Grep,...), or read-only; default all")
	f.StringVar(&o.SystemPrompt, "system-prompt", "", "replace the system prompt")
	f.StringVar(&o.Mode, "mode", "text", "output: text (answer on stdout, progress on stderr) or json (one event per line)")
	f.StringVar(&o.Session, "session", "", "transcript file to continue (and append to)")
	f.StringArrayVar(&o.Allow, "allow", nil, "permission rule to allow, e.g. 'Bash(go test:*)' or 'Edit(src/**)' (repeatable)")
	f.StringArrayVar(&o.Deny, "deny", nil, "permission rule to deny (repeatable)")
	f.StringVar(&o.PermMode, "permission-mode", "", "default, acceptEdits, bypassPermissions or plan")
	f.Int64Var(&o.Budget, "token-budget", 0, "advisory token budget: warnings at 80% and 100%, never a stop")
}

func newRunCmd(app *App) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run one agent to completion",
		Long: `Run one agent on PROMPT until it answers without a tool call or reaches the
turn cap. In text mode the final answer goes to stdout and progress to stderr;
in json mode stdout carries one JSON event per line. Every run appends to a
transcript under .brood/sessions/; continue it with --session FILE.`,
		Example: `  brood run "what does this repository do?"
  brood run --model ollama/qwen3 --allow 'Bash(go test:*)' "make the tests pass"
  brood run --session .brood/sessions/01J….jsonl "now add a test for it"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAgent(cmd.Context(), app, &o, strings.Join(args, " "))
		},
	}
	o.bind(cmd)
	return cmd
}

// resolveModel builds the model from a spec, or explains in one line how to
// configure one.
func resolveModel(app *App, spec string) (model.Model, error) {
	if spec == "" {
		return nil, errors.New("no model configured: pass --model (e.g. anthropic/claude-sonnet-5-5 with ANTHROPIC_API_KEY, openai/gpt-5, ollama/qwen3), set BROOD_MODEL, or put model = \"...\" in .brood/settings.toml; `brood demo` runs without one")
	}
	return provider.Resolve(spec, provider.Options{
		Getenv: app.Getenv,
		Script: func(path string) (model.Model, error) { return script.Load(path) },
	})
}

func runAgent(ctx context.Context, app *App, o *runOptions, prompt string) error {
	s := app.Settings
	spec := firstNonEmpty(o.Model, s.Model)
	m, err := resolveModel(app, spec)
	if err != nil {
		return err
	}
	tools, err := selectTools(o.Tools)
	if err != nil {
		return err
	}
	env, err := toolEnv(app, o)
	if err != nil {
		return err
	}
	var history []model.Message
	path := o.Session
	if path != "" {
		recs, _, err := session.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--session %s: %w", path, err)
		}
		st := session.Replay(recs)
		history = st.Messages
		if prompt == "" && (len(history) == 0 || history[len(history)-1].Role != model.RoleUser) {
			return fmt.Errorf("--session %s: nothing to continue: the last run finished; give a prompt", path)
		}
	} else {
		if prompt == "" {
			return errors.New("no prompt: brood run \"what should the agent do?\"")
		}
		path = filepath.Join(app.ProjectRoot, ".brood", "sessions", ulid.Make().String()+".jsonl")
		if err := dispatch.EnsureStateDir(app.ProjectRoot); err != nil {
			return err
		}
	}
	tw, err := session.Open(path, session.Options{Redact: tool.NewRedactor(os.Environ()).Redact})
	if err != nil {
		return err
	}
	defer tw.Close()
	system := o.SystemPrompt
	if system == "" {
		system = defaultSystemPrompt(app.Cwd)
	}
	out := newRenderer(app, o.Mode)
	// --token-budget reaches the children too (each is warned against it),
	// and the root's budget counts what they spent.
	app.Settings.TokenBudget = firstPositive64(o.Budget, s.TokenBudget)
	disp, err := app.dispatcher(spec, system, tools.Names(), app.permissions(o), out.dispatchEvent, o.Mode == "json")
	if err != nil {
		return err
	}
	if disp != nil {
		tools = tool.NewSet(append(toolList(tools), disp.Tools()...)...)
		disp.SetLifetime(ctx)
	}
	cfg := agent.Config{
		Name:        "root",
		Model:       m,
		System:      system,
		Tools:       tools,
		Env:         env,
		MaxTurns:    firstPositive(o.MaxTurns, s.MaxTurns),
		MaxTokens:   s.MaxTokens,
		Effort:      firstNonEmpty(o.Effort, s.Effort),
		TokenBudget: firstPositive64(o.Budget, s.TokenBudget),
		Transcript:  tw,
	}
	if disp != nil {
		cfg.Inject = disp.Notices
		cfg.UsageBelow = disp.ChildUsage
	}
	out.start(path)
	var outcome *agent.Outcome
	for ev, err := range agent.Run(ctx, cfg, history, prompt) {
		if err != nil {
			break
		}
		out.event(ev)
		if ev.Outcome != nil {
			outcome = ev.Outcome
		}
	}
	if outcome == nil {
		return ExitCode(1, errors.New("the run ended without an outcome"))
	}
	var childUsage model.Usage
	if disp != nil {
		// Background children the model left running are waited for: they
		// are work the user asked for. Ctrl-C stops them in stages; each is
		// then recorded as cancelled and stays resumable.
		if n := len(disp.Running()); n > 0 {
			fmt.Fprintf(app.Err, "· waiting for %d background task(s); Ctrl-C stops them (they stay resumable with brood tasks resume)\n", n)
			disp.WaitBackground()
		}
		childUsage = disp.ChildUsage()
	}
	out.done(outcome, path, childUsage)
	switch outcome.Status {
	case agent.StatusFailed:
		return ExitCode(1, errors.New(outcome.Error))
	case agent.StatusCancelled:
		return ExitCode(130, fmt.Errorf("cancelled; continue with --session %s", path))
	}
	return nil
}

func toolList(s *tool.Set) []tool.Tool {
	var out []tool.Tool
	for _, n := range s.Names() {
		t, _ := s.Get(n)
		out = append(out, t)
	}
	return out
}

func selectTools(spec string) (*tool.Set, error) {
	all := tool.Builtins()
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "*" {
		return tool.NewSet(all...), nil
	}
	byName := tool.NewSet(all...)
	var picked []tool.Tool
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if strings.EqualFold(name, "read-only") {
			for _, t := range all {
				if t.ReadOnly() {
					picked = append(picked, t)
				}
			}
			continue
		}
		t, ok := byName.Get(name)
		if !ok {
			return nil, fmt.Errorf("--tools: unknown tool %q; brood has %s", name, strings.Join(byName.Names(), ", "))
		}
		picked = append(picked, t)
	}
	return tool.NewSet(picked...), nil
}

// permissions are the rules children inherit: settings plus flags.
func (a *App) permissions(o *runOptions) dispatch.Permissions {
	s := a.Settings.Permissions
	p := dispatch.Permissions{Mode: s.Mode, Allow: append([]string(nil), s.Allow...), Deny: append([]string(nil), s.Deny...), Ask: s.Ask}
	if o != nil {
		p.Mode = firstNonEmpty(o.PermMode, s.Mode)
		p.Allow = append(p.Allow, o.Allow...)
		p.Deny = append(p.Deny, o.Deny...)
	}
	return p
}

func toolEnv(app *App, o *runOptions) (*tool.Env, error) {
	s := app.Settings.Permissions
	mode := firstNonEmpty(o.PermMode, s.Mode)
	perms, err := tool.NewPermissions(mode, append(append(delegate.AlwaysAllowed(), s.Allow...), o.Allow...), append(append([]string(nil), s.Deny...), o.Deny...), s.Ask)
	if err != nil {
		return nil, err
	}
	ask := app.terminalAsker(o.Mode)
	return &tool.Env{
		Dir:         app.Cwd,
		OutputDir:   filepath.Join(app.ProjectRoot, ".brood", "outputs"),
		Perms:       perms,
		Interactive: ask != nil,
		Ask:         ask,
		BashTimeout: app.Settings.Bash.Timeout.Duration,
		OutputLimit: app.Settings.Bash.OutputLimit,
	}, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstPositive(vals ...int) int {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}

func firstPositive64(vals ...int64) int64 {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
}
