// Package interactive is bare `brood` on a terminal: the flags that open
// the interactive mode (--continue, --resume, --model) and the wiring of
// the TUI (internal/tui) to the same engine as `brood run`.
package interactive

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/tasks"
	wfcli "github.com/broodhq/brood/internal/cli/workflow"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/tui"
)

// Options are the root command's flags for the interactive mode.
type Options struct {
	Factory  *cmdutil.Factory
	Continue bool
	Resume   string
	Model    string
	// Depth is --max-subagent-depth and --enable-subagents, as brood run
	// takes them.
	Depth cmdutil.DepthFlags
}

// AddFlags adds the interactive mode's flags to the root command.
func AddFlags(root *cobra.Command, f *cmdutil.Factory) *Options {
	o := &Options{Factory: f}
	fl := root.Flags()
	fl.BoolVarP(&o.Continue, "continue", "c", false, "interactive mode: reopen the latest session of this project")
	fl.StringVar(&o.Resume, "resume", "", "interactive mode: reopen the session with this id")
	fl.StringVar(&o.Model, "model", "", "interactive mode: the model as provider/model")
	o.Depth.Bind(root)
	return o
}

// Wanted reports whether the flags ask for the interactive mode.
func (o *Options) Wanted() bool { return o.Continue || o.Resume != "" }

// Run opens the TUI when stdin and stdout are a terminal; ran is false
// (and nothing happened) when they are not.
func Run(ctx context.Context, o *Options) (ran bool, err error) {
	f := o.Factory
	in, out, ok := f.Terminal()
	if !ok {
		if o.Wanted() {
			return false, errors.New("--continue and --resume open the interactive mode, which needs a terminal; elsewhere continue a session with brood run --session FILE")
		}
		return false, nil
	}
	if err := askTrust(f, trustAsk{in: in, out: out, now: time.Now()}); err != nil {
		return true, err
	}
	if err := o.Depth.Apply(f); err != nil {
		return true, err
	}
	cfg, err := config(f, o)
	if err != nil {
		return true, err
	}
	stop, err := observe(ctx, f, &cfg)
	if err != nil {
		return true, err
	}
	defer stop()
	return true, tui.Run(telemetry.NewContext(ctx, cfg.Agent.Telemetry), cfg, in, out, f.Err)
}

// observe puts the user's hooks (their tool-call and Stop hooks, and the
// pairing of subagents' starts and stops, late ones of a dead brood
// included) and OpenTelemetry on the session, as brood run does.
func observe(ctx context.Context, f *cmdutil.Factory, cfg *tui.Config) (func(), error) {
	s := f.Settings
	hk, err := f.OpenHooks(ctx, cfg.Session, s.Permissions.Mode, s.Effort)
	if err != nil {
		return nil, err
	}
	if _, err := hk.Session().Start(ctx, map[bool]string{true: "resume", false: "startup"}[cfg.Session != ""]); err != nil {
		hk.Close()
		return nil, err
	}
	if sess := hk.Session(); sess != nil {
		cfg.BeforePrompt = func(ctx context.Context, prompt string) (string, error) {
			extra, err := sess.Prompt(ctx, prompt)
			if err != nil || extra == "" {
				return prompt, err
			}
			return prompt + "\n\n" + extra, nil
		}
	}
	tel, stopTel := f.StartTelemetry(ctx)
	cfg.Agent.Hooks, cfg.Agent.Telemetry = hk.Session().AgentHooks(), tel
	if cfg.Session != "" {
		cfg.Agent.ID = strings.TrimSuffix(filepath.Base(cfg.Session), ".jsonl")
	}
	next := cfg.NewDispatcher
	if next != nil {
		cfg.NewDispatcher = func(onEvent func(delegate.Event), ask delegate.AskFunc) (*delegate.Dispatcher, error) {
			d, err := next(hk.Observe(onEvent), ask)
			hk.Background(d)
			hk.Attach(d)
			return d, err
		}
	}
	return func() { hk.Close(); stopTel() }, nil
}

// resumeID resolves --resume: a session id, a unique prefix of one in any
// case (as brood run --resume takes it), or a transcript's path.
func resumeID(projectRoot, resume string) (string, error) {
	if resume == "" || strings.HasSuffix(resume, ".jsonl") {
		return resume, nil
	}
	files, _ := filepath.Glob(filepath.Join(projectRoot, ".brood", "sessions", "*.jsonl"))
	ids := make([]string, 0, len(files))
	for _, p := range files {
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ".jsonl"))
	}
	id, err := cmdutil.ResolveID("session", resume, ids)
	if err != nil {
		return "", fmt.Errorf("--resume: %w in %s; brood --continue reopens the latest", err, filepath.Join(projectRoot, ".brood", "sessions"))
	}
	return id, nil
}

// config builds the TUI's engine: the root agent as brood run builds it.
func config(f *cmdutil.Factory, o *Options) (tui.Config, error) {
	resume, err := resumeID(f.ProjectRoot, o.Resume)
	if err != nil {
		return tui.Config{}, err
	}
	path, err := tui.SessionPath(f.ProjectRoot, resume, o.Continue)
	if err != nil {
		return tui.Config{}, err
	}
	s := f.Settings
	spec := cmdutil.FirstNonEmpty(o.Model, s.Model)
	m, err := f.ResolveModel(spec)
	if err != nil {
		return tui.Config{}, err
	}
	prices, err := f.Prices()
	if err != nil {
		return tui.Config{}, err
	}
	tools, _ := cmdutil.SelectTools("")
	perms := f.Permissions(cmdutil.PermissionFlags{})
	tperms, err := call.Permissions(perms, delegate.AlwaysAllowed())
	if err != nil {
		return tui.Config{}, err
	}
	env := &tool.Env{
		Dir: f.Cwd, OutputDir: filepath.Join(f.ProjectRoot, ".brood", "outputs"), Perms: tperms,
		BashTimeout: s.Bash.Timeout.Duration, OutputLimit: s.Bash.OutputLimit, Redactor: f.Redactor,
	}
	files := f.ProjectFilesPrompt() // CLAUDE.md, AGENTS.md, as brood run has them
	system := cmdutil.DefaultSystemPrompt(f.Cwd) + files
	return tui.Config{
		ProjectRoot: f.ProjectRoot, ModelSpec: spec, ResolveModel: f.ResolveModel,
		Agent: agent.Config{
			Name: "root", Model: m, System: system, Tools: tools, Env: env,
			MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, Effort: s.Effort, TokenBudget: s.TokenBudget,
		},
		NewDispatcher: func(onEvent func(delegate.Event), ask delegate.AskFunc) (*delegate.Dispatcher, error) {
			// Quiet: the TUI owns the terminal, so no [DISPATCH] lines on
			// stderr (BROOD_DEBUG_AGENT_LOG=1 tees them to a file).
			return f.Dispatcher(cmdutil.DispatcherConfig{Model: spec, System: system, SystemFiles: files, Tools: tools.Names(), Permissions: perms, OnEvent: onEvent, Quiet: true, Ask: ask, Warm: true})
		},
		Registry: f.Registry(),
		Session:  path,
		Prices:   prices,
		Kill:     func(ctx context.Context, id string) error { _, _, err := tasks.Kill(ctx, f, id); return err },
		Redact:   f.Redactor.Redact,
		Getenv:   f.Getenv,
		Workflow: func(file string, inputs []string) (tui.Workflow, error) {
			p, err := wfcli.Prepare(f, file, inputs)
			if err != nil {
				return nil, err
			}
			return p, nil
		},
	}, nil
}
