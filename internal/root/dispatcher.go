package root

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
)

// dispatcherConfig is what a root tells its dispatcher.
type dispatcherConfig struct {
	Model  string
	System string
	// SystemFiles is the instruction-file block System ends with (see
	// ProjectFilesPrompt): a definition with an empty body inherits System
	// without it, and gets the files by its own right.
	SystemFiles string
	Tools       []string
	Permissions dispatch.Permissions
	OnEvent     func(spawn.Event)
	Quiet       bool // no progress lines on stderr (json output)
	// Ask takes the children's permission questions (the interactive
	// mode); nil: they deny, as without a person.
	Ask spawn.AskFunc
	// Warm keeps settings pool.warm children started ahead of their tasks
	// (a session that delegates: run, interactive); they end with Lifetime
	// (or Close).
	Warm bool
	// Lifetime bounds the background children and the warm ones (nil:
	// never cancelled).
	Lifetime context.Context
	// Session is the id of the root's transcript, recorded in its
	// children's owner records.
	Session string
	// ToolHooks are the user's hooks for the children's own tool calls
	// (RunHooks.ToolHooks; nil: none).
	ToolHooks spawn.ToolHooks
	// Source names who dispatches (root, mcp, cli); default root.
	Source string
	// Depth, when set, is this process's depth and the cap (default
	// Factory.Depth).
	Depth func() (depth, max int)
	// Hidden are paths none of the children may read.
	Hidden []string
	// AddDirs are the run's additional working directories (--add-dir).
	AddDirs []string
}

// ctx bounds what building the dispatcher runs (git, for the instruction
// files' imports): the children's lifetime.
func (c dispatcherConfig) ctx() context.Context {
	if c.Lifetime != nil {
		return c.Lifetime
	}
	return context.Background()
}

// newDispatcher builds the root's Dispatcher, or nil at the depth cap:
// the one place brood builds a dispatcher's Config (a child's is
// spawn.RunChild's).
func newDispatcher(f *cmdutil.Factory, c dispatcherConfig) (*spawn.Dispatcher, error) {
	// Factory.Depth is depth.Current's decision: spawn.New takes it as
	// it is (Placed) rather than reading /proc again.
	depth, max, placed := 0, 0, c.Depth == nil
	if placed {
		depth, max = f.Depth()
	} else {
		depth, max = c.Depth()
	}
	if depth >= max {
		return nil, nil
	}
	cfg := spawn.Config{
		ProjectRoot: f.ProjectRoot, Workspace: f.Cwd, Registry: f.Registry(), Settings: f.Settings,
		ExeFunc: f.WarmChildExe(), Args: f.ChildArgs(), Env: f.Environ,
		Depth: depth, MaxDepth: max, Placed: placed, SourceAgent: cmdutil.FirstNonEmpty(c.Source, "root"),
		Lifetime: c.Lifetime, Session: c.Session, ToolHooks: c.ToolHooks,
		ParentSystem: c.System, ParentModel: c.Model, ParentTools: c.Tools, Permissions: c.Permissions,
		OnEvent: c.OnEvent, Redact: f.Redactor.Redact, Redactor: f.Redactor, Ask: c.Ask,
		MCP: f.MCPServers(), MCPHeld: f.MCPHeld(), TrustProject: f.TrustsProjectFile, Grant: f.Grant(),
		SettingSources: f.SettingSources,
		ProjectFiles:   f.ChildProjectFiles(c.ctx(), c.Permissions.Deny), ParentProjectFiles: c.SystemFiles,
		Extras: f.Links.Delegation, Hidden: c.Hidden, AddDirs: c.AddDirs,
	}
	if !c.Quiet {
		cfg.Stderr = f.Err
	}
	if c.Warm {
		cfg.Warm = f.Settings.Pool.Warm
	}
	if f.Getenv("BROOD_DEBUG_AGENT_LOG") == "1" {
		cfg.DebugLog = taskdir.Open(f.ProjectRoot).DebugLog()
	}
	for _, d := range f.RegistryErrors() {
		fmt.Fprintln(f.Err, "brood: agents:", d.String())
	}
	return spawn.New(cfg)
}

// taskDispatcher builds a dispatcher that can act on an existing task from
// the command line, at the depth of the task's parent. The task directory is
// the child's to write, so the cap and the permissions come from this
// project's settings, and the task's depth, model and workspace from its
// parent's owner record, never from the envelope.
func taskDispatcher(f *cmdutil.Factory, t *dispatch.Task, c dispatcherConfig) (*spawn.Dispatcher, error) {
	depth, maxDepth := f.Depth()
	taskDepth, model, ws := t.Depth, f.Settings.Model, ""
	if o := t.Owner; o != nil && o.Version > 0 {
		taskDepth, model, ws = o.Depth, cmdutil.FirstNonEmpty(f.Settings.Model, o.Model), o.Workspace
	} else if t.Envelope != nil {
		// An owner record from an older brood kept no depth: the deeper of
		// what the records say, so a rewritten envelope cannot buy room.
		taskDepth = max(t.Envelope.Depth, t.Depth)
		if t.Log != nil {
			taskDepth = max(taskDepth, t.Log.Depth)
		}
		ws = t.Envelope.Workspace
	}
	if taskDepth-1 > depth {
		depth = taskDepth - 1
	}
	builtins, _ := cmdutil.SelectTools("")
	// The task's own workspace, as long as it is inside this project.
	workspace := f.ProjectRoot
	if rel, err := filepath.Rel(f.ProjectRoot, ws); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && filepath.IsAbs(ws) {
		workspace = ws
	}
	cfg := spawn.Config{
		ProjectRoot: f.ProjectRoot, Workspace: workspace, Registry: f.Registry(), Settings: f.Settings,
		ExeFunc: f.WarmChildExe(), Args: f.ChildArgs(), Env: f.Environ,
		Depth: depth, MaxDepth: maxDepth, SourceAgent: "cli",
		ParentModel: model, ParentSystem: cmdutil.DefaultSystemPrompt(workspace),
		ParentTools: builtins.Names(), Permissions: f.Permissions(cmdutil.PermissionFlags{}), OnEvent: c.OnEvent, Stderr: f.Err,
		Lifetime: c.Lifetime, ToolHooks: c.ToolHooks,
		ProjectFiles: f.ChildProjectFiles(c.ctx(), nil),
		Redact:       f.Redactor.Redact,
		Redactor:     f.Redactor,
		MCP:          f.MCPServers(), MCPHeld: f.MCPHeld(), TrustProject: f.TrustsProjectFile, Grant: f.Grant(),
		SettingSources: f.SettingSources,
		Extras:         f.Links.Delegation, Hidden: c.Hidden,
	}
	if f.Getenv("BROOD_DEBUG_AGENT_LOG") == "1" {
		cfg.DebugLog = taskdir.Open(f.ProjectRoot).DebugLog()
	}
	return spawn.New(cfg)
}
