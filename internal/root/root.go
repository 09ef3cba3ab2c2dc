// Package root assembles what a brood command runs on, in one place: the
// root agent (its model, its tools and their environment with the
// project's redactor, its transcript, the user's hooks, the configured MCP
// servers, telemetry) and its dispatcher, built complete — its lifetime,
// its session and the hooks for its children's tool calls are in its
// Config, never set after. brood run, the interactive mode, brood mcp,
// brood worker, brood subagent, brood tasks resume and a workflow's local
// engine all go through New, so they cannot differ in what they redact or
// observe. Engine chooses where agent calls run (this process's pool or a
// Temporal fleet) for every command that can run them elsewhere.
//
// Verb packages (internal/cli/<noun>) import root; root imports none of
// them.
package root

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tool"
)

// Options say which root a command needs. The zero value is a dispatcher
// for the user (brood subagent's shape) with the project's settings.
type Options struct {
	// Source names who dispatches, in the children's records: root (an
	// agent; the default), mcp, cli (a command acting on a task).
	Source string
	// Model is the model spec (default: the settings').
	Model string
	// NeedModel fails at once when no model is configured (a command whose
	// children would all inherit none); the spec itself is the children's
	// to resolve.
	NeedModel bool
	// Effort is the reasoning effort (default: the settings').
	Effort string
	// Perms are the permission flags on top of the settings' rules.
	Perms cmdutil.PermissionFlags
	// System replaces the system prompt; SystemFiles is the instruction
	// file block it ends with (see dispatcherConfig). Default:
	// brood's prompt, and for an agent the project's instruction files.
	System, SystemFiles string
	// Tools are the built-in tools the agent has (nil: all of them).
	Tools *tool.Set

	// Agent builds the root agent's Config (Root.Agent): without it the
	// root is a dispatcher alone.
	Agent bool
	// Transcript is the root's transcript file: the agent's (opened here,
	// redacted by the project's redactor, unless Interactive) and the
	// hooks' session. "" none.
	Transcript string
	// Claim is a new session's owner record, written by the transcript's
	// writer with its first line (session.ClaimLater); nil: none to write.
	Claim *session.Pending
	// MaxTurns and TokenBudget override the settings' (0: theirs).
	MaxTurns    int
	TokenBudget int64
	// Ask puts the agent's own permission questions to a person (nil:
	// none here, the rules decide).
	Ask func(tool, subject, reason string, rules []string) bool
	// Prompt decides the root's calls that need approval when no one is
	// asked (claude -p's --permission-prompt-tool; nil: the rules decide).
	Prompt tool.PromptFunc
	// MCP connects the agent to the configured MCP servers and adds their
	// tools to its own (brood run with every tool, as Claude Code's main
	// agent has them).
	MCP bool
	// Interactive is the TUI: it opens (and switches) the transcript
	// itself and builds the dispatcher with its own event sink
	// (Root.NewDispatcher); New builds neither.
	Interactive bool

	// OnEvent receives the dispatcher's events (the hooks see them too).
	OnEvent func(spawn.Event)
	// Quiet: no [DISPATCH] lines on stderr.
	Quiet bool
	// ChildAsk takes the children's permission questions (nil: they deny).
	ChildAsk spawn.AskFunc
	// Warm keeps settings pool.warm children started ahead of their tasks.
	Warm bool
	// Task is the task a command acts on (brood tasks resume): the
	// dispatcher stands at its parent's depth, in its workspace.
	Task *dispatch.Task
	// Depth, when set, is this process's depth and cap (brood mcp's own
	// reading of the tree).
	Depth func() (depth, max int)
	// Hidden are paths none of the dispatcher's children may read (brood
	// mcp's --token-file).
	Hidden []string
	// AddDirs are the run's additional working directories (--add-dir,
	// permissions.additionalDirectories), for its children.
	AddDirs []string
	// Unobserved runs no user hooks and starts no telemetry export (a
	// fleet worker: its calls' hooks are their submitters'; a command that
	// only reads a task).
	Unobserved bool
}

// Root is an assembled root: close it when the command ends.
type Root struct {
	// Spec is the model spec; Model the resolved model (Agent only).
	Spec  string
	Model model.Model
	// Agent is the root agent's Config, complete (Options.Agent).
	Agent agent.Config
	// Dispatcher is nil at the depth cap, and for Interactive until
	// NewDispatcher.
	Dispatcher *spawn.Dispatcher
	// Hooks are the user's hooks for this run (nil: none configured).
	Hooks *cmdutil.RunHooks
	// Telemetry is nil when no exporter is configured.
	Telemetry *telemetry.Telemetry
	// Redact is the project's redactor: environment secrets, the
	// project's .env values, key formats. Every writer of the run uses it.
	Redact func(string) string

	f       *cmdutil.Factory
	o       Options
	tools   *tool.Set // the built-ins the agent and its children inherit
	system  string
	files   string
	closers []func()
}

// New assembles the root o asks for. ctx bounds the dispatcher's
// background and warm children.
func New(ctx context.Context, f *cmdutil.Factory, o Options) (_ *Root, err error) {
	s := f.Settings
	r := &Root{f: f, o: o, Spec: cmp.Or(o.Model, s.Model), Redact: f.Redactor.Redact}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	switch {
	case o.Agent:
		if r.Model, err = f.ResolveModel(r.Spec); err != nil {
			return nil, err
		}
	case o.NeedModel && r.Spec == "":
		_, err = f.ResolveModel("") // the one line that says how to configure one
		return nil, err
	}
	r.tools = o.Tools
	if r.tools == nil {
		r.tools, _ = cmdutil.SelectTools("")
	}
	r.system, r.files = o.System, o.SystemFiles
	if r.system == "" {
		r.system = cmdutil.DefaultSystemPrompt(f.Cwd)
		if o.Agent {
			// CLAUDE.md, AGENTS.md: the agent's by right, and its
			// children's by theirs (not through an inherited prompt).
			r.files = f.ProjectFilesPrompt(ctx, f.Permissions(o.Perms).Deny)
			r.system += r.files
		}
	}
	if !o.Unobserved {
		hk, err := f.OpenHooks(ctx, o.Transcript, cmp.Or(o.Perms.Mode, s.Permissions.Mode), cmp.Or(o.Effort, s.Effort))
		if err != nil {
			return nil, err
		}
		r.Hooks = hk
		r.closers = append(r.closers, hk.Close)
		tel, stopTel := f.StartTelemetry(ctx)
		r.Telemetry = tel
		r.closers = append(r.closers, stopTel)
	}
	if !o.Interactive {
		d, err := r.NewDispatcher(ctx, SessionID(o.Transcript), o.OnEvent, o.ChildAsk)
		if err != nil {
			return nil, err
		}
		r.Dispatcher = d
		if d != nil {
			r.closers = append(r.closers, d.Close) // the warm children no task took
		}
	}
	if o.Agent {
		if err := r.agent(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// NewDispatcher builds the root's dispatcher with onEvent and ask, bounded
// by life, its children recorded under the transcript session (nil at the
// depth cap). New calls it, except for the interactive mode, whose event
// sink exists only once its UI does (and whose new session's id only once
// it opens the transcript).
func (r *Root) NewDispatcher(life context.Context, session string, onEvent func(spawn.Event), ask spawn.AskFunc) (*spawn.Dispatcher, error) {
	f, o := r.f, r.o
	c := dispatcherConfig{
		Model: r.Spec, System: r.system, SystemFiles: r.files, Tools: r.tools.Names(),
		Permissions: f.Permissions(o.Perms), OnEvent: r.Hooks.Observe(onEvent), Quiet: o.Quiet, Ask: ask,
		Warm: o.Warm, Lifetime: life, Session: session, ToolHooks: r.Hooks.ToolHooks(),
		Source: o.Source, Depth: o.Depth, Hidden: o.Hidden, AddDirs: o.AddDirs,
	}
	var d *spawn.Dispatcher
	var err error
	if o.Task != nil {
		d, err = taskDispatcher(f, o.Task, c)
	} else {
		d, err = newDispatcher(f, c)
	}
	if err != nil || d == nil {
		return nil, err
	}
	r.Hooks.Background(d)
	return d, nil
}

// MustDispatch is the dispatcher, or an error saying why this process
// cannot delegate (what, e.g. "run agent calls", completes the sentence).
func (r *Root) MustDispatch(what string) (*spawn.Dispatcher, error) {
	if r.Dispatcher == nil {
		return nil, errors.New("delegation is off here: this process is at the subagent depth cap, so it cannot " + what)
	}
	return r.Dispatcher, nil
}

// agent assembles the root agent's Config.
func (r *Root) agent(ctx context.Context) error {
	f, o, s := r.f, r.o, r.f.Settings
	perms, err := call.Permissions(f.Permissions(o.Perms), spawn.AlwaysAllowed())
	if err != nil {
		return err
	}
	env := &tool.Env{
		Dir:         f.Cwd,
		OutputDir:   taskdir.Open(f.ProjectRoot).OutputsDir(),
		Perms:       perms,
		Interactive: o.Ask != nil,
		Ask:         o.Ask,
		Prompt:      o.Prompt,
		BashTimeout: s.Bash.Timeout.Duration,
		OutputLimit: s.Bash.OutputLimit,
		Redactor:    f.Redactor, // the environment's secrets, the project's .env values, key formats
		Environ:     f.Environ,  // with the trusted settings env
	}
	tools := cmdutil.ToolList(r.tools)
	cfg := agent.Config{
		Name: "root", Model: r.Model, System: r.system, Env: env,
		MaxTurns:    cmdutil.FirstPositive(o.MaxTurns, s.MaxTurns),
		MaxTokens:   s.MaxTokens,
		Effort:      cmp.Or(o.Effort, s.Effort),
		TokenBudget: cmdutil.FirstPositive(o.TokenBudget, s.TokenBudget),
		Hooks:       r.Hooks.Session().AgentHooks(),
		Telemetry:   r.Telemetry,
		ID:          SessionID(o.Transcript),
	}
	if d := r.Dispatcher; d != nil {
		tools = append(tools, d.Tools()...)
		cfg.Inject, cfg.UsageBelow = d.Notices, d.ChildUsage
		cfg.Hooks = d.OwnHooks(cfg.Hooks) // their writes are not an in-place child's
	}
	if o.MCP {
		// The configured MCP servers' tools, as Claude Code's main agent
		// has them (and a subagent without a tools list inherits).
		servers := f.MCPSession(ctx, "")
		r.closers = append(r.closers, func() { servers.Close() })
		tools = append(tools, servers.Tools()...)
	}
	// A bare deny rule (the settings' or the flags') takes the tool off
	// the list the model is offered, as Claude Code does.
	cfg.Tools = withoutDenied(tool.NewSet(tools...), f.Permissions(o.Perms).Deny)
	if o.Transcript != "" && !o.Interactive {
		tw, err := session.Open(o.Transcript, session.Options{Redact: r.Redact, Claim: o.Claim})
		if err != nil {
			return err
		}
		r.closers = append(r.closers, func() {
			// Its owner record's sync is waited for here: a failure means a
			// power cut could lose the record, and the session would not
			// be continued.
			if err := tw.Close(); err != nil && o.Claim != nil {
				fmt.Fprintf(f.Err, "brood: warning: %v\n", err)
			}
		})
		cfg.Transcript = tw
	}
	r.Agent = cfg
	return nil
}

// Close ends what New started, last first: the transcript, the MCP
// servers, telemetry (flushed), the hooks (waited for).
func (r *Root) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// SessionID is a transcript's id: its file name without .jsonl.
func SessionID(transcript string) string {
	if transcript == "" {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(transcript), ".jsonl")
}

// withoutDenied drops from set the tools a bare deny rule names
// (--disallowedTools Task): Claude Code takes them off the list the model
// is offered, not only refuses their calls. Task and Agent are one tool.
func withoutDenied(set *tool.Set, deny []string) *tool.Set {
	gone := map[string]bool{}
	for _, r := range deny {
		if strings.ContainsAny(r, "(*") {
			continue // a rule on some calls, not the tool
		}
		gone[r] = true
		switch r {
		case "Task":
			gone["Agent"] = true
		case "Agent":
			gone["Task"] = true
		}
	}
	if len(gone) == 0 {
		return set
	}
	var keep []tool.Tool
	for _, n := range set.Names() {
		if t, ok := set.Get(n); ok && !gone[n] {
			keep = append(keep, t)
		}
	}
	return tool.NewSet(keep...)
}
