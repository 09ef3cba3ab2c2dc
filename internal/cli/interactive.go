package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/term"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/tui"
)

// interactiveOptions are the root command's flags for the TUI.
type interactiveOptions struct {
	Continue bool
	Resume   string
	Model    string
}

// terminal returns stdin and stdout when both are terminals: only then does
// bare `brood` open the interactive mode.
func (a *App) terminal() (in, out *os.File, ok bool) {
	in, okIn := a.In.(*os.File)
	out, okOut := a.rawOut.(*os.File)
	if !okIn || !okOut || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil, nil, false
	}
	return in, out, true
}

// runInteractive opens the TUI over the same engine as brood run.
func runInteractive(ctx context.Context, app *App, o *interactiveOptions, in, out *os.File) error {
	path, err := tui.SessionPath(app.ProjectRoot, o.Resume, o.Continue)
	if err != nil {
		return err
	}
	s := app.Settings
	spec := firstNonEmpty(o.Model, s.Model)
	m, err := resolveModel(app, spec)
	if err != nil {
		return err
	}
	ro := &runOptions{Model: spec, Mode: "text"}
	tools, _ := selectTools("")
	env, err := toolEnv(app, ro)
	if err != nil {
		return err
	}
	system := defaultSystemPrompt(app.Cwd)
	cfg := tui.Config{
		ProjectRoot:  app.ProjectRoot,
		ModelSpec:    spec,
		ResolveModel: func(spec string) (model.Model, error) { return resolveModel(app, spec) },
		Agent: agent.Config{
			Name: "root", Model: m, System: system, Tools: tools, Env: env,
			MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens, Effort: s.Effort, TokenBudget: s.TokenBudget,
		},
		NewDispatcher: func(onEvent func(delegate.Event), ask delegate.AskFunc) (*delegate.Dispatcher, error) {
			// quiet: the TUI owns the terminal, so no [DISPATCH] lines on
			// stderr (BROOD_DEBUG_AGENT_LOG=1 tees them to a file).
			return app.dispatcher(spec, system, tools.Names(), app.permissions(ro), onEvent, true)
		},
		Registry: app.registry(),
		Session:  path,
		Kill:     func(ctx context.Context, id string) error { _, _, err := killTask(ctx, app, id); return err },
		Redact:   tool.NewRedactor(os.Environ()).Redact,
		Getenv:   app.Getenv,
	}
	return tui.Run(ctx, cfg, in, out, app.Err)
}

// killTask stops a running task in stages: SIGTERM to its process group,
// the grace period, then SIGKILL. It returns the task's id and the pid it
// stopped.
func killTask(ctx context.Context, app *App, id string) (string, int, error) {
	t, err := dispatch.LoadTask(app.ProjectRoot, id)
	if err != nil {
		return "", 0, err
	}
	if t.Status != dispatch.StatusRunning || t.Log == nil {
		return "", 0, fmt.Errorf("task %s is not running (status %s)", t.ID, t.Status)
	}
	pid := t.Log.PID
	if pid <= 1 {
		return "", 0, errors.New("task " + t.ID + " has no process to stop")
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	grace := app.Settings.Pool.KillGrace.Duration
	if !waitGone(ctx, pid, t.ID, grace) {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		waitGone(ctx, pid, t.ID, grace)
	}
	return t.ID, pid, nil
}
