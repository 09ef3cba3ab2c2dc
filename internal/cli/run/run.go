// Package run is `brood run`: one agent to completion on a prompt, its
// flags, its output modes and its exit status.
package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
)

// Options are the flags of `brood run` (and of `brood demo`).
type Options struct {
	Factory *cmdutil.Factory

	Prompt       string
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

// BindFlags adds the agent flags to cmd.
func (o *Options) BindFlags(cmd *cobra.Command) {
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

// NewCmdRun builds `brood run`. runF replaces the run (tests of the flags).
func NewCmdRun(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
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
			opts.Prompt = strings.Join(args, " ")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	opts.BindFlags(cmd)
	return cmd
}

// Run runs the root agent on opts.Prompt to its outcome.
func Run(ctx context.Context, o *Options) error {
	f := o.Factory
	s := f.Settings
	spec := cmdutil.FirstNonEmpty(o.Model, s.Model)
	m, err := f.ResolveModel(spec)
	if err != nil {
		return err
	}
	tools, err := cmdutil.SelectTools(o.Tools)
	if err != nil {
		return err
	}
	env, err := toolEnv(f, o)
	if err != nil {
		return err
	}
	history, path, err := openSession(f, o)
	if err != nil {
		return err
	}
	tw, err := session.Open(path, session.Options{Redact: f.Redactor.Redact})
	if err != nil {
		return err
	}
	defer tw.Close()
	system := o.SystemPrompt
	if system == "" {
		system = cmdutil.DefaultSystemPrompt(f.Cwd)
	}
	out := render.New(f.Out, f.Err, o.Mode)
	// --token-budget reaches the children too (each is warned against it),
	// and the root's budget counts what they spent (UsageBelow).
	f.Settings.TokenBudget = cmdutil.FirstPositive(o.Budget, s.TokenBudget)
	disp, err := f.Dispatcher(cmdutil.DispatcherConfig{
		Model: spec, System: system, Tools: tools.Names(), Permissions: f.Permissions(o.permissionFlags()),
		OnEvent: out.DispatchEvent, Quiet: o.Mode == "json",
	})
	if err != nil {
		return err
	}
	if disp != nil {
		tools = tool.NewSet(append(cmdutil.ToolList(tools), disp.Tools()...)...)
		disp.SetLifetime(ctx)
	}
	cfg := agent.Config{
		Name:        "root",
		Model:       m,
		System:      system,
		Tools:       tools,
		Env:         env,
		MaxTurns:    cmdutil.FirstPositive(o.MaxTurns, s.MaxTurns),
		MaxTokens:   s.MaxTokens,
		Effort:      cmdutil.FirstNonEmpty(o.Effort, s.Effort),
		TokenBudget: cmdutil.FirstPositive(o.Budget, s.TokenBudget),
		Transcript:  tw,
	}
	if disp != nil {
		cfg.Inject = disp.Notices
		cfg.UsageBelow = disp.ChildUsage
	}
	return finish(ctx, f, cfg, history, o.Prompt, path, out, disp)
}

func (o *Options) permissionFlags() cmdutil.PermissionFlags {
	return cmdutil.PermissionFlags{Mode: o.PermMode, Allow: o.Allow, Deny: o.Deny}
}

// openSession reads the transcript to continue, or names a new one.
func openSession(f *cmdutil.Factory, o *Options) ([]model.Message, string, error) {
	path := o.Session
	if path != "" {
		recs, _, err := session.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("--session %s: %w", path, err)
		}
		history := session.Replay(recs).Messages
		if o.Prompt == "" && (len(history) == 0 || history[len(history)-1].Role != model.RoleUser) {
			return nil, "", fmt.Errorf("--session %s: nothing to continue: the last run finished; give a prompt", path)
		}
		return history, path, nil
	}
	if o.Prompt == "" {
		return nil, "", errors.New("no prompt: brood run \"what should the agent do?\"")
	}
	path = filepath.Join(taskdir.Open(f.ProjectRoot).SessionsDir(), ulid.Make().String()+".jsonl")
	if err := dispatch.EnsureStateDir(f.ProjectRoot); err != nil {
		return nil, "", err
	}
	return nil, path, nil
}

// finish runs the agent loop, waits for background children, and maps the
// outcome to the exit status.
func finish(ctx context.Context, f *cmdutil.Factory, cfg agent.Config, history []model.Message, prompt, path string, out *render.Renderer, disp *delegate.Dispatcher) error {
	out.Start(path)
	var outcome *agent.Outcome
	for ev, err := range agent.Run(ctx, cfg, history, prompt) {
		if err != nil {
			break
		}
		out.Event(ev)
		if ev.Outcome != nil {
			outcome = ev.Outcome
		}
	}
	if outcome == nil {
		return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New("the run ended without an outcome"))
	}
	var childUsage model.Usage
	if disp != nil {
		// Background children the model left running are waited for: they
		// are work the user asked for. Ctrl-C stops them in stages; each is
		// then recorded as cancelled and stays resumable.
		if n := len(disp.Running()); n > 0 {
			fmt.Fprintf(f.Err, "· waiting for %d background task(s); Ctrl-C stops them (they stay resumable with brood tasks resume)\n", n)
			disp.WaitBackground()
		}
		childUsage = disp.ChildUsage()
	}
	out.Done(outcome, path, childUsage)
	switch outcome.Status {
	case agent.StatusFailed:
		return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New(outcome.Error))
	case agent.StatusCancelled:
		return cmdutil.ExitCode(cmdutil.ExitInterrupt, fmt.Errorf("cancelled; continue with --session %s", path))
	case agent.StatusPartial:
		return cmdutil.ExitCode(cmdutil.ExitPartial, nil) // Done said how to continue
	}
	return nil
}

func toolEnv(f *cmdutil.Factory, o *Options) (*tool.Env, error) {
	perms, err := call.Permissions(f.Permissions(o.permissionFlags()), delegate.AlwaysAllowed())
	if err != nil {
		return nil, err
	}
	ask := terminalAsker(f, o.Mode)
	return &tool.Env{
		Dir:         f.Cwd,
		OutputDir:   taskdir.Open(f.ProjectRoot).OutputsDir(),
		Perms:       perms,
		Interactive: ask != nil,
		Ask:         ask,
		BashTimeout: f.Settings.Bash.Timeout.Duration,
		OutputLimit: f.Settings.Bash.OutputLimit,
		Redactor:    f.Redactor,
	}, nil
}
