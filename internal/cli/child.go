package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/tool"
)

// addChildProtocol makes the root command the child end of the protocol:
// `brood --mode json --task-id ID --envelope PATH`.
func addChildProtocol(root *cobra.Command, app *App) {
	var envelope, taskID, mode string
	f := root.Flags()
	f.StringVar(&envelope, "envelope", "", "run as a subagent child: the dispatch envelope to execute (set by the parent)")
	f.StringVar(&taskID, "task-id", "", "the child's task id (with --envelope)")
	f.StringVar(&mode, "mode", "json", "child output mode (with --envelope; always json)")
	// The child protocol is brood talking to itself, not a user interface.
	for _, name := range []string{"envelope", "task-id", "mode"} {
		_ = f.MarkHidden(name)
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if envelope == "" {
			return cmd.Help()
		}
		tel, stop := app.startTelemetry(cmd.Context())
		defer stop()
		return delegate.RunChild(cmd.Context(), delegate.ChildConfig{
			Telemetry:    tel,
			EnvelopePath: envelope,
			TaskID:       taskID,
			Stdout:       app.Out,
			Stdin:        app.In,
			ResolveModel: func(spec string) (model.Model, error) { return resolveModel(app, spec) },
			LoadRegistry: func() (*registry.Registry, error) { return app.registry(), nil },
			Settings:     app.Settings,
			Exe:          app.childExe(),
			Args:         childArgs(app),
			Redact:       tool.NewRedactor(os.Environ()).Redact,
		})
	}
}

// childExe is the binary children run: brood itself (BROOD_CHILD_EXE
// overrides it, for tests that re-exec their own binary).
func (a *App) childExe() string {
	if v := a.Getenv("BROOD_CHILD_EXE"); v != "" {
		return v
	}
	exe, err := os.Executable()
	if err != nil {
		return "brood"
	}
	return exe
}

// childArgs are extra leading arguments for re-executing brood (used by
// tests that re-exec their own binary).
func childArgs(app *App) []string {
	if v := app.Getenv("BROOD_CHILD_ARGS"); v != "" {
		return []string{v}
	}
	return nil
}

// registry loads the agent registry, printing its warnings to stderr once.
func (a *App) registry() *registry.Registry {
	reg, diags := registry.Load(a.registryOptions())
	a.regDiags = diags
	return reg
}

func (a *App) registryOptions() registry.Options {
	return registry.Options{ProjectRoot: a.ProjectRoot, Home: a.Home, Claude: a.Settings.Agents.ClaudeEnabled()}
}

// depth reads the depth stamp: this process's depth and the tree-wide cap.
func (a *App) depth() (int, int) {
	depth, _ := strconv.Atoi(a.Getenv(delegate.EnvDepth))
	max := a.Settings.MaxSubagentDepth
	if v := a.Getenv(delegate.EnvMaxDepth); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			max = n
		}
	}
	return depth, max
}

// dispatcher builds the root's Dispatcher, or nil at the cap.
func (a *App) dispatcher(spec, system string, tools []string, perms dispatch.Permissions, onEvent func(delegate.Event), quiet bool) (*delegate.Dispatcher, error) {
	depth, max := a.depth()
	if depth >= max {
		return nil, nil
	}
	cfg := delegate.Config{
		ProjectRoot: a.ProjectRoot, Workspace: a.Cwd, Registry: a.registry(), Settings: a.Settings,
		Exe: a.childExe(), Args: childArgs(a),
		Depth: depth, MaxDepth: max, SourceAgent: "root",
		ParentSystem: system, ParentModel: spec, ParentTools: tools, Permissions: perms,
		OnEvent: onEvent, Redact: tool.NewRedactor(os.Environ()).Redact,
	}
	if !quiet {
		cfg.Stderr = a.Err
	}
	if a.Getenv("BROOD_DEBUG_AGENT_LOG") == "1" {
		cfg.DebugLog = filepath.Join(a.ProjectRoot, ".brood", "brood-debug.log")
	}
	for _, d := range a.regDiags {
		if d.Severity == registry.SeverityError {
			fmt.Fprintln(a.Err, "brood: agents:", d.String())
		}
	}
	return delegate.New(cfg)
}
