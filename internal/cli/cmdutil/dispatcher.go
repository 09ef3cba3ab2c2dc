package cmdutil

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
)

// ResolveModel builds the model from a spec, or explains in one line how to
// configure one.
func (f *Factory) ResolveModel(spec string) (model.Model, error) {
	if spec == "" {
		return nil, errors.New("no model configured: pass --model (e.g. anthropic/claude-sonnet-5-5 with ANTHROPIC_API_KEY, openai/gpt-5, ollama/qwen3), set BROOD_MODEL, or put model = \"...\" in .brood/settings.toml; `brood demo` runs without one")
	}
	return provider.Resolve(spec, provider.Options{
		Getenv:   f.Getenv,
		Script:   func(path string) (model.Model, error) { return script.Load(path) },
		Adapters: f.Links.Models,
	})
}

// PermissionFlags are the permission flags a command took.
type PermissionFlags struct {
	Mode  string
	Allow []string
	Deny  []string
}

// Permissions are the rules children inherit: settings plus flags, with
// Claude Code's newer names (Agent, Explore, Plan) also in brood's
// (AliasRules).
func (f *Factory) Permissions(fl PermissionFlags) dispatch.Permissions {
	s := f.Settings.Permissions
	return dispatch.Permissions{
		Mode:  FirstNonEmpty(fl.Mode, s.Mode),
		Allow: AliasRules(append(append([]string(nil), s.Allow...), fl.Allow...)),
		Deny:  AliasRules(append(append([]string(nil), s.Deny...), fl.Deny...)),
		Ask:   AliasRules(s.Ask),
	}
}

// DispatcherConfig is what a command's root agent tells its dispatcher.
type DispatcherConfig struct {
	Model  string
	System string
	// SystemFiles is the instruction-file block System ends with (see
	// ProjectFilesPrompt): a definition with an empty body inherits System
	// without it, and gets the files by its own right.
	SystemFiles string
	Tools       []string
	Permissions dispatch.Permissions
	OnEvent     func(delegate.Event)
	Quiet       bool // no progress lines on stderr (json output)
	// Ask takes the children's permission questions (the interactive
	// mode); nil: they deny, as without a person.
	Ask delegate.AskFunc
	// Warm keeps settings pool.warm children started ahead of their tasks
	// (a session that delegates: run, interactive); the caller must Close
	// the dispatcher when the session ends.
	Warm bool
}

// Dispatcher builds the root's Dispatcher, or nil at the depth cap.
func (f *Factory) Dispatcher(c DispatcherConfig) (*delegate.Dispatcher, error) {
	depth, max := f.Depth()
	if depth >= max {
		return nil, nil
	}
	cfg := delegate.Config{
		ProjectRoot: f.ProjectRoot, Workspace: f.Cwd, Registry: f.Registry(), Settings: f.Settings,
		ExeFunc: f.WarmChildExe(), Args: f.ChildArgs(),
		Depth: depth, MaxDepth: max, SourceAgent: "root",
		ParentSystem: c.System, ParentModel: c.Model, ParentTools: c.Tools, Permissions: c.Permissions,
		OnEvent: c.OnEvent, Redact: f.Redactor.Redact, Ask: c.Ask,
		MCP: f.MCPServers(), MCPHeld: f.MCPHeld(), TrustProject: f.TrustsProjectFile, Grant: f.Grant(),
		ProjectFiles: f.ChildProjectFiles(), ParentProjectFiles: c.SystemFiles,
		Extras: f.Links.Delegation,
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
	return delegate.New(cfg)
}

// TaskDispatcher builds a dispatcher that can act on an existing task from
// the command line, at the depth of the task's parent. The task directory is
// the child's to write, so the cap and the permissions come from this
// project's settings, and the task's depth, model and workspace from its
// parent's owner record, never from the envelope.
func (f *Factory) TaskDispatcher(t *dispatch.Task, onEvent func(delegate.Event)) (*delegate.Dispatcher, error) {
	depth, max := f.Depth()
	taskDepth, model, ws := t.Depth, f.Settings.Model, ""
	if o := t.Owner; o != nil && o.Version > 0 {
		taskDepth, model, ws = o.Depth, FirstNonEmpty(f.Settings.Model, o.Model), o.Workspace
	} else if t.Envelope != nil {
		// An owner record from an older brood kept no depth: the deeper of
		// what the records say, so a rewritten envelope cannot buy room.
		taskDepth = max2(t.Envelope.Depth, t.Depth)
		if t.Log != nil {
			taskDepth = max2(taskDepth, t.Log.Depth)
		}
		ws = t.Envelope.Workspace
	}
	if taskDepth-1 > depth {
		depth = taskDepth - 1
	}
	builtins, _ := SelectTools("")
	// The task's own workspace, as long as it is inside this project.
	workspace := f.ProjectRoot
	if rel, err := filepath.Rel(f.ProjectRoot, ws); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && filepath.IsAbs(ws) {
		workspace = ws
	}
	cfg := delegate.Config{
		ProjectRoot: f.ProjectRoot, Workspace: workspace, Registry: f.Registry(), Settings: f.Settings,
		ExeFunc: f.WarmChildExe(), Args: f.ChildArgs(),
		Depth: depth, MaxDepth: max, SourceAgent: "cli",
		ParentModel: model, ParentSystem: DefaultSystemPrompt(workspace),
		ParentTools: builtins.Names(), Permissions: f.Permissions(PermissionFlags{}), OnEvent: onEvent, Stderr: f.Err,
		ProjectFiles: f.ChildProjectFiles(),
		Redact:       f.Redactor.Redact,
		MCP:          f.MCPServers(), MCPHeld: f.MCPHeld(), TrustProject: f.TrustsProjectFile, Grant: f.Grant(),
		Extras: f.Links.Delegation,
	}
	return delegate.New(cfg)
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// SelectTools resolves a --tools value: "" or "*" for every built-in, else
// a comma-separated list of names or "read-only".
func SelectTools(spec string) (*tool.Set, error) {
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

// ToolList is a set's tools in name order.
func ToolList(s *tool.Set) []tool.Tool {
	var out []tool.Tool
	for _, n := range s.Names() {
		t, _ := s.Get(n)
		out = append(out, t)
	}
	return out
}
